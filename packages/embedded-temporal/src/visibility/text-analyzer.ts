// Word splitting for Text search attributes. Temporal documents Text matching in terms of
// Elasticsearch's standard analyzer: both the stored value and the query are split into
// lower-cased words, and `=` matches when any query word equals any stored word. This is a
// compact approximation of that analyzer (Unicode word-boundary rules): runs of letters,
// digits, marks and connector punctuation form words; '.', apostrophes and, between digits,
// ',' / ';' do not break a word ("v1.2", "don't", "1,000"); every Han or Hiragana character
// is a word of its own. Hyphens, spaces, slashes, colons and other symbols separate words.

const SINGLE = String.raw`[\p{Script=Han}\p{Script=Hiragana}]`;
const WORD = String.raw`(?:(?!${SINGLE})[\p{L}\p{M}\p{N}\p{Pc}])`;
const JOINER = String.raw`(?:['.\u2019]|(?<=\p{N})[,;](?=\p{N}))`;
const TOKEN = new RegExp(String.raw`${SINGLE}|${WORD}+(?:${JOINER}${WORD}+)*`, 'gu');

export function analyzeText(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) out.push(m[0].toLowerCase());
  return out;
}

/** True when any word of the query appears among the words of the stored text. */
export function textMatches(stored: string, queryWords: readonly string[]): boolean {
  if (queryWords.length === 0) return false;
  const words = new Set(analyzeText(stored));
  return queryWords.some((w) => words.has(w));
}
