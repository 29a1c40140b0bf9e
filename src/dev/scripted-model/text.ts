// Deterministic text helpers: the token split used both for streaming and for
// usage counts, so `completion_tokens` equals the number of streamed pieces.

// A token is a run of up to 6 non-space characters with the whitespace before
// it; concatenating the tokens always gives back the input exactly.
const TOKEN_RE = /\s*\S{1,6}|\s+/g;

export function tokenize(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

/** The characters `\s` matches (ECMAScript WhiteSpace and LineTerminator), by UTF-16 code unit. */
function isSpace(c: number): boolean {
  if (c <= 0xa0) return c === 32 || (c >= 9 && c <= 13) || c === 0xa0;
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * `tokenize(text).length` without building the array: each run of non-space
 * code units is ceil(length / 6) tokens (leading whitespace rides along), and
 * trailing whitespace is one more. Usage counts every message of every request,
 * and a long tool-using conversation replays hundreds of them each time.
 */
export function countTokens(text: string): number {
  let n = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (isSpace(text.charCodeAt(i))) {
      if (run > 0) n += ((run + 5) / 6) | 0;
      run = 0;
    } else run++;
  }
  if (run > 0) n += ((run + 5) / 6) | 0;
  else if (text.length > 0) n++;
  return n;
}

// Words of at most 5 letters, so a word plus its trailing period stays one token.
const VOCAB = [
  'agent',
  'task',
  'plan',
  'step',
  'tool',
  'data',
  'query',
  'model',
  'state',
  'event',
  'retry',
  'queue',
  'cache',
  'graph',
  'node',
  'edge',
  'path',
  'value',
  'input',
  'check',
  'build',
  'merge',
  'score',
  'frame',
  'token',
  'rule',
  'field',
  'store',
  'batch',
  'shard',
  'clock',
  'timer',
  'route',
  'proxy',
  'trace',
  'span',
  'index',
  'table',
  'row',
  'key',
];
const SENTENCE = 9;

/** `n` words of filler prose, identical for identical `n`; exactly `n` tokens. */
export function fillerWords(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = VOCAB[(i * 7 + 3) % VOCAB.length];
    const pos = i % SENTENCE;
    if (pos === 0) w = w[0].toUpperCase() + w.slice(1);
    if (pos === SENTENCE - 1 || i === n - 1) w += '.';
    words.push(w);
  }
  return words.join(' ');
}

/** Short one-line form of user text, for use inside reasoning sentences. */
export function excerpt(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 3)}...`;
}
