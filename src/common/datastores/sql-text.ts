// A first look at a query text before it goes to the database: one statement,
// a read, and the markers it uses, so the model gets a clear error at submit.
// Not the guard: the database's read-only transaction (or connection) is.
//
// The text is first masked: strings, quoted identifiers, comments and dollar
// quotes become spaces (same length), so a `;`, `$1` or `?` inside them is not
// seen by the checks that follow.
import type { SqlDialect } from './types';

export type StatementCheck = { ok: true; markers: number } | { ok: false; reason: string };

type Masked = { ok: true; text: string } | { ok: false; reason: string };

const READ_KEYWORDS: Record<SqlDialect, ReadonlySet<string>> = {
  postgres: new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'EXPLAIN']),
  sqlite: new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN']),
};

/** Characters that continue an identifier: `$` does in both dialects (`a$1` is a name, not a marker). */
const ID_CHAR = /[\p{L}\p{N}_$]/u;
const DOLLAR_TAG = /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u;

export function checkStatement(sql: string, dialect: SqlDialect): StatementCheck {
  const masked = mask(sql, dialect);
  if (!masked.ok) return masked;
  const statements = masked.text.split(';').filter((s) => s.trim() !== '');
  if (statements.length === 0) return { ok: false, reason: 'the query is empty' };
  if (statements.length > 1)
    return { ok: false, reason: 'the query holds more than one statement: send one at a time' };
  const keyword = /^[\s(]*([A-Za-z_]+)/.exec(statements[0])?.[1]?.toUpperCase();
  if (!keyword)
    return { ok: false, reason: 'the query does not begin with a keyword: only a read (SELECT or WITH) may run' };
  if (!READ_KEYWORDS[dialect].has(keyword))
    return { ok: false, reason: `${keyword}: only a read (SELECT or WITH) may run` };
  return dialect === 'postgres' ? postgresMarkers(masked.text) : sqliteMarkers(masked.text);
}

/** `$1..$n`, contiguous from `$1`. A `?` is an operator in PostgreSQL (jsonb), never a marker. */
function postgresMarkers(text: string): StatementCheck {
  const used = new Set<number>();
  for (const m of text.matchAll(/\$(\d+)/g)) {
    if (isIdChar(text[m.index - 1])) continue;
    const n = Number(m[1]);
    if (n === 0) return { ok: false, reason: '$0 is not a marker: markers count from $1' };
    used.add(n);
  }
  const highest = Math.max(0, ...used);
  for (let n = 1; n <= highest; n++) {
    if (!used.has(n))
      return { ok: false, reason: `the query uses $${highest} but not $${n}: markers run $1, $2, ... without a gap` };
  }
  return { ok: true, markers: highest };
}

/** Bare `?` only: numbered and named parameters would bind by name or number, not in order. */
function sqliteMarkers(text: string): StatementCheck {
  let markers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '?') {
      if (/\d/.test(text[i + 1] ?? ''))
        return {
          ok: false,
          reason: `numbered parameter ?${/\d+/.exec(text.slice(i + 1))?.[0]}: use ? markers, bound in order`,
        };
      markers++;
    } else if ((c === ':' || c === '@' || c === '$') && !isIdChar(text[i - 1]) && isIdChar(text[i + 1])) {
      const name = /^[\p{L}\p{N}_$]+/u.exec(text.slice(i + 1))?.[0];
      return { ok: false, reason: `named parameter ${c}${name}: use ? markers, bound in order` };
    }
  }
  return { ok: true, markers };
}

function isIdChar(c: string | undefined): boolean {
  return c !== undefined && ID_CHAR.test(c);
}

/** The text with every string, quoted name, comment and dollar quote blanked out. */
function mask(sql: string, dialect: SqlDialect): Masked {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const end = quotedEnd(sql, i, dialect);
    if (end === i) {
      out += sql[i++];
      continue;
    }
    if (end < 0) return { ok: false, reason: `the query has an unterminated ${describeOpening(sql, i)}` };
    out += ' '.repeat(end - i);
    i = end;
  }
  return { ok: true, text: out };
}

/** Where the quoted part starting at `i` ends (exclusive); `i` when none starts there; -1 when it never ends. */
function quotedEnd(sql: string, i: number, dialect: SqlDialect): number {
  const c = sql[i];
  const next = sql[i + 1];
  if (c === '-' && next === '-') {
    const nl = sql.indexOf('\n', i);
    return nl < 0 ? sql.length : nl;
  }
  if (c === '/' && next === '*') return blockCommentEnd(sql, i, dialect === 'postgres');
  if (c === "'") return stringEnd(sql, i, "'", dialect === 'postgres' && isEscapePrefix(sql, i));
  if (c === '"') return stringEnd(sql, i, '"', false);
  if (dialect === 'sqlite' && c === '`') return stringEnd(sql, i, '`', false);
  if (dialect === 'sqlite' && c === '[') return closeAt(sql, sql.indexOf(']', i + 1));
  if (dialect === 'postgres' && c === '$' && !isIdChar(sql[i - 1])) return dollarQuoteEnd(sql, i);
  return i;
}

/** An `E'...'` string: backslash escapes apply (PostgreSQL's standard strings take none). */
function isEscapePrefix(sql: string, quote: number): boolean {
  return (sql[quote - 1] === 'E' || sql[quote - 1] === 'e') && !isIdChar(sql[quote - 2]);
}

function stringEnd(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === quote && sql[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i++;
  }
  return -1;
}

/** PostgreSQL nests block comments; SQLite ends one at the first `*\/`. */
function blockCommentEnd(sql: string, start: number, nested: boolean): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i) && (nested || depth === 0)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return -1;
}

function dollarQuoteEnd(sql: string, start: number): number {
  const tag = DOLLAR_TAG.exec(sql.slice(start, start + 130))?.[0];
  if (!tag) return start;
  return closeAt(sql, sql.indexOf(tag, start + tag.length), tag.length);
}

function closeAt(sql: string, closing: number, length = 1): number {
  return closing < 0 ? -1 : closing + length;
}

function describeOpening(sql: string, i: number): string {
  const c = sql[i];
  if (c === '-' || c === '/') return 'comment';
  if (c === "'") return 'string';
  if (c === '$') return 'dollar-quoted string';
  return 'quoted name';
}
