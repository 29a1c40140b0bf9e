// Tokenizer for the List Filter language. It follows the MySQL-flavoured lexer the real
// server parses with: single- or double-quoted strings with backslash escapes and doubled
// delimiters, backtick identifiers with doubled backticks, case-insensitive keywords, and
// `&&` / `||` as spellings of AND / OR.
import { VisibilityQueryError } from './errors';

export type Keyword =
  | 'AND'
  | 'OR'
  | 'NOT'
  | 'IN'
  | 'IS'
  | 'NULL'
  | 'BETWEEN'
  | 'STARTS_WITH'
  | 'TRUE'
  | 'FALSE'
  | 'ORDER'
  | 'GROUP'
  | 'BY'
  | 'ASC'
  | 'DESC'
  | 'LIMIT'
  | 'LIKE'
  | 'REGEXP'
  | 'RLIKE'
  | 'ESCAPE';

const KEYWORDS = new Set<string>([
  'AND',
  'OR',
  'NOT',
  'IN',
  'IS',
  'NULL',
  'BETWEEN',
  'STARTS_WITH',
  'TRUE',
  'FALSE',
  'ORDER',
  'GROUP',
  'BY',
  'ASC',
  'DESC',
  'LIMIT',
  'LIKE',
  'REGEXP',
  'RLIKE',
  'ESCAPE',
]);

export type Token =
  | { type: 'ident'; value: string; quoted: boolean; pos: number; raw: string }
  | { type: 'string'; value: string; pos: number; raw: string }
  | { type: 'number'; value: string; pos: number; raw: string }
  | { type: 'keyword'; value: Keyword; pos: number; raw: string }
  | { type: 'op'; value: string; pos: number; raw: string }
  | { type: 'eof'; pos: number; raw: '' };

// MySQL's escape table; any other escaped character stands for itself.
const ESCAPES: Record<string, string> = {
  '0': '\0',
  b: '\b',
  n: '\n',
  r: '\r',
  t: '\t',
  Z: '\x1a',
};

const isBlank = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string) => c >= '0' && c <= '9';
const isIdentStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === '@';
const isIdentPart = (c: string) => isIdentStart(c) || isDigit(c);

export function syntaxError(pos: number, near: string, expected?: string): VisibilityQueryError {
  const at = near === '' ? `at position ${pos + 1} (end of query)` : `at position ${pos + 1} near '${near}'`;
  return new VisibilityQueryError(
    'syntax',
    `syntax error ${at}${expected ? `: expected ${expected}` : ''}`,
    near || undefined,
    pos + 1,
  );
}

export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (isBlank(c)) {
      i++;
      continue;
    }
    const start = i;
    if (isIdentStart(c)) {
      while (i < src.length && isIdentPart(src[i])) i++;
      const raw = src.slice(start, i);
      const upper = raw.toUpperCase();
      if (KEYWORDS.has(upper)) tokens.push({ type: 'keyword', value: upper as Keyword, pos: start, raw });
      else tokens.push({ type: 'ident', value: raw, quoted: false, pos: start, raw });
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(src[i + 1] ?? ''))) {
      i = scanNumber(src, i);
      tokens.push({ type: 'number', value: src.slice(start, i), pos: start, raw: src.slice(start, i) });
      continue;
    }
    if (c === "'" || c === '"') {
      const [value, end] = scanString(src, i);
      i = end;
      tokens.push({ type: 'string', value, pos: start, raw: src.slice(start, i) });
      continue;
    }
    if (c === '`') {
      const [value, end] = scanBacktick(src, i);
      i = end;
      tokens.push({ type: 'ident', value, quoted: true, pos: start, raw: src.slice(start, i) });
      continue;
    }
    const op = scanOperator(src, i);
    if (op === undefined) throw syntaxError(start, c, 'an attribute, value or operator');
    i += op.length;
    if (op === '&&') tokens.push({ type: 'keyword', value: 'AND', pos: start, raw: op });
    else if (op === '||') tokens.push({ type: 'keyword', value: 'OR', pos: start, raw: op });
    else tokens.push({ type: 'op', value: op === '<>' ? '!=' : op, pos: start, raw: op });
  }
  tokens.push({ type: 'eof', pos: src.length, raw: '' });
  return tokens;
}

function scanNumber(src: string, i: number): number {
  const start = i;
  if (src[i] === '0' && (src[i + 1] === 'x' || src[i + 1] === 'X')) {
    // The server's value parser rejects hex literals, so do it at the lexer with a clear message.
    throw new VisibilityQueryError(
      'invalid',
      `unable to parse value '${readWord(src, start)}'`,
      readWord(src, start),
      start + 1,
    );
  }
  while (isDigit(src[i] ?? '')) i++;
  if (src[i] === '.') {
    i++;
    while (isDigit(src[i] ?? '')) i++;
  }
  if (src[i] === 'e' || src[i] === 'E') {
    let j = i + 1;
    if (src[j] === '+' || src[j] === '-') j++;
    if (isDigit(src[j] ?? '')) {
      i = j;
      while (isDigit(src[i] ?? '')) i++;
    }
  }
  // A letter glued to a number ("5abc") is a lexing error in the real parser too.
  if (i < src.length && isIdentStart(src[i])) throw syntaxError(start, readWord(src, start));
  return i;
}

function readWord(src: string, i: number): string {
  let j = i;
  while (j < src.length && (isIdentPart(src[j]) || src[j] === '.')) j++;
  return src.slice(i, j);
}

function scanString(src: string, i: number): [string, number] {
  const delim = src[i];
  const start = i;
  let out = '';
  i++;
  for (;;) {
    if (i >= src.length) throw syntaxError(start, src.slice(start, start + 20), `closing ${delim} of the string`);
    const c = src[i];
    if (c === '\\') {
      if (i + 1 >= src.length) throw syntaxError(start, src.slice(start, start + 20), `closing ${delim} of the string`);
      const next = src[i + 1];
      out += ESCAPES[next] ?? next;
      i += 2;
      continue;
    }
    if (c === delim) {
      if (src[i + 1] === delim) {
        out += delim;
        i += 2;
        continue;
      }
      return [out, i + 1];
    }
    out += c;
    i++;
  }
}

function scanBacktick(src: string, i: number): [string, number] {
  const start = i;
  let out = '';
  i++;
  for (;;) {
    if (i >= src.length) throw syntaxError(start, src.slice(start, start + 20), 'closing ` of the attribute name');
    if (src[i] === '`') {
      if (src[i + 1] === '`') {
        out += '`';
        i += 2;
        continue;
      }
      if (out === '') throw syntaxError(start, '``', 'a non-empty attribute name');
      return [out, i + 1];
    }
    out += src[i];
    i++;
  }
}

// Longest match first so "<=>" is not read as "<=" followed by ">".
const OPERATORS = [
  '<=>',
  '<=',
  '>=',
  '<>',
  '!=',
  '&&',
  '||',
  '<<',
  '>>',
  '=',
  '<',
  '>',
  '(',
  ')',
  ',',
  '+',
  '-',
  '*',
  '/',
  '%',
  ';',
  '!',
  '.',
];

function scanOperator(src: string, i: number): string | undefined {
  return OPERATORS.find((op) => src.startsWith(op, i));
}
