// Typed values: turning query literals into comparable values (with the server's type rules
// and messages) and turning stored record values into the same representation. Times are
// bigint nanoseconds because literals carry up to 9 fractional digits while records hold
// epoch milliseconds; a float would lose the sub-millisecond part at today's epoch.
import type { ResolvedAttribute, ValueDomain } from './attributes';
import { VisibilityQueryError } from './errors';
import type { ValueNode } from './parser';

export type Scalar = string | number | boolean | bigint;

const STATUS_CODES: Readonly<Record<string, number>> = {
  Unspecified: 0,
  Running: 1,
  Completed: 2,
  Failed: 3,
  Canceled: 4,
  Terminated: 5,
  ContinuedAsNew: 6,
  TimedOut: 7,
  Paused: 8,
};
const STATUS_SCREAMING: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(STATUS_CODES).map(([k, v]) => [
    `WORKFLOW_EXECUTION_STATUS_${k.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`,
    v,
  ]),
);
const VALID_STATUS_CODES = new Set(Object.values(STATUS_CODES));

const NS_PER_MS = 1_000_000n;

// ---------- literals ----------

function describe(node: ValueNode): string {
  switch (node.kind) {
    case 'string':
      return `'${node.value}' (string)`;
    case 'number':
      return `${node.text} (${isIntegerText(node.text) ? 'integer' : 'float'})`;
    case 'bool':
      return `${node.value ? 'TRUE' : 'FALSE'} (bool)`;
    default:
      return node.raw;
  }
}

function typeMismatch(attr: ResolvedAttribute, node: ValueNode): VisibilityQueryError {
  return new VisibilityQueryError(
    'invalid',
    `invalid value type for search attribute ${attr.name} of type ${attr.type}: ${describe(node)}`,
    node.raw,
    node.pos + 1,
  );
}

const isIntegerText = (text: string) => /^[+-]?\d+$/.test(text);

/** Converts one literal to the attribute's domain, or throws naming the literal and attribute. */
export function literalValue(attr: ResolvedAttribute, node: ValueNode): Scalar {
  switch (node.kind) {
    case 'ident':
      throw new VisibilityQueryError(
        'unsupported',
        `column name on the right side of comparison expression (did you forget to quote '${node.name}'?)`,
        node.name,
        node.pos + 1,
      );
    case 'null':
      throw new VisibilityQueryError(
        'invalid',
        `cannot compare ${attr.name} with NULL; use IS NULL or IS NOT NULL`,
        node.raw,
        node.pos + 1,
      );
    case 'tuple':
      throw new VisibilityQueryError(
        'invalid',
        `a value list is only allowed after IN or NOT IN, got ${node.raw}`,
        node.raw,
        node.pos + 1,
      );
    default:
      return typedLiteral(attr, attr.domain, node);
  }
}

function typedLiteral(
  attr: ResolvedAttribute,
  domain: ValueDomain,
  node: Exclude<ValueNode, { kind: 'ident' | 'null' | 'tuple' }>,
): Scalar {
  switch (domain) {
    case 'keyword':
    case 'keywordList':
      if (node.kind !== 'string') throw typeMismatch(attr, node);
      return node.value;
    case 'text':
      if (node.kind !== 'string') throw typeMismatch(attr, node);
      if (node.value.trim() === '') {
        throw new VisibilityQueryError(
          'invalid',
          `no tokens found filtering on Text type search attribute ${attr.name}`,
          node.raw,
          node.pos + 1,
        );
      }
      return node.value;
    case 'number':
      if (node.kind !== 'number') throw typeMismatch(attr, node);
      return Number(node.text);
    case 'bool':
      if (node.kind !== 'bool') throw typeMismatch(attr, node);
      return node.value;
    case 'datetime':
      if (node.kind === 'number' && isIntegerText(node.text)) return BigInt(node.text); // Unix nanoseconds
      if (node.kind !== 'string') throw typeMismatch(attr, node);
      return parseDatetimeLiteral(node.value, node);
    case 'duration':
      if (node.kind === 'number' && isIntegerText(node.text)) return BigInt(node.text);
      if (node.kind === 'string') {
        const ns = parseDurationNanos(node.value);
        if (ns !== undefined) return ns;
        throw new VisibilityQueryError(
          'invalid',
          `invalid duration value for search attribute ${attr.name}: '${node.value}'`,
          node.raw,
          node.pos + 1,
        );
      }
      throw typeMismatch(attr, node);
    case 'status':
      return statusLiteral(attr, node);
  }
}

function statusLiteral(
  attr: ResolvedAttribute,
  node: Exclude<ValueNode, { kind: 'ident' | 'null' | 'tuple' }>,
): number {
  if (node.kind === 'string') {
    const code = STATUS_CODES[node.value] ?? STATUS_SCREAMING[node.value];
    if (code !== undefined) return code;
    throw new VisibilityQueryError('invalid', `invalid ${attr.name} value '${node.value}'`, node.raw, node.pos + 1);
  }
  if (node.kind === 'number' && isIntegerText(node.text)) {
    const code = Number(node.text);
    if (VALID_STATUS_CODES.has(code)) return code;
    throw new VisibilityQueryError('invalid', `invalid ${attr.name} value ${node.text}`, node.raw, node.pos + 1);
  }
  throw typeMismatch(attr, node);
}

function parseDatetimeLiteral(text: string, node: ValueNode): bigint {
  const ns = parseRfc3339Nanos(text);
  if (ns === undefined) {
    throw new VisibilityQueryError(
      'invalid',
      `unable to parse datetime '${text}' (expected RFC3339, e.g. 2024-01-02T15:04:05.123Z)`,
      node.raw,
      node.pos + 1,
    );
  }
  return ns;
}

// ---------- datetimes and durations ----------

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Strict RFC3339 with optional 1-9 fractional digits, as Go's time.RFC3339Nano parser accepts. */
export function parseRfc3339Nanos(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[8].slice(1, 3));
    const om = Number(m[8].slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // setUTCFullYear avoids Date.UTC's mapping of years 0-99 onto 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const ms = d.getTime() - offsetMinutes * 60_000;
  const fraction = BigInt((m[7] ?? '').padEnd(9, '0'));
  return BigInt(ms) * NS_PER_MS + fraction;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export function msToNanos(ms: number): bigint {
  const whole = Math.floor(ms);
  return BigInt(whole) * NS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
}

const DURATION_UNITS_NS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
  d: 86400e9,
};

/** Integer nanoseconds, Go duration syntax with a "d" unit ("1h30m", "1.5d"), or "hh:mm:ss". */
export function parseDurationNanos(text: string): bigint | undefined {
  if (/^[+-]?\d+$/.test(text)) return BigInt(text);
  const hms = /^(\d+):(\d+):(\d+)$/.exec(text);
  if (hms) {
    const [h, m, s] = hms.slice(1).map(Number);
    if (m > 59 || s > 59) return undefined;
    return BigInt(h) * 3_600_000_000_000n + BigInt(m) * 60_000_000_000n + BigInt(s) * 1_000_000_000n;
  }
  const go = /^([+-]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+)$/.exec(text);
  if (!go) return text === '0' ? 0n : undefined;
  let total = 0;
  for (const part of go[2].matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g)) {
    total += Number(part[1]) * DURATION_UNITS_NS[part[2]];
  }
  const ns = BigInt(Math.round(total));
  return go[1] === '-' ? -ns : ns;
}

// ---------- stored values ----------

/** A search attribute written by an SDK may arrive as a one-element list; unwrap for scalars. */
function unwrap(raw: unknown): unknown {
  return Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
}

/**
 * Normalises a stored value into the domain's representation. Anything absent or of the
 * wrong shape is null, which behaves like SQL NULL: comparisons on it are unknown.
 */
export function recordValue(domain: ValueDomain, raw: unknown): Scalar | string[] | null {
  if (raw === undefined || raw === null) return null;
  switch (domain) {
    case 'keywordList': {
      const list = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
      // An empty list is how SDKs unset a list attribute, so it counts as absent.
      return list.length === 0 ? null : list;
    }
    case 'keyword':
    case 'text': {
      const v = unwrap(raw);
      return typeof v === 'string' ? v : null;
    }
    case 'number': {
      const v = unwrap(raw);
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      if (typeof v === 'bigint') return Number(v);
      return null;
    }
    case 'bool': {
      const v = unwrap(raw);
      return typeof v === 'boolean' ? v : null;
    }
    case 'datetime':
      return storedDatetime(unwrap(raw));
    case 'duration':
      return typeof raw === 'number' && Number.isFinite(raw) ? msToNanos(raw) : null;
    case 'status': {
      const code = typeof raw === 'string' ? STATUS_CODES[raw] : undefined;
      return code ?? null;
    }
  }
}

function storedDatetime(v: unknown): bigint | null {
  if (typeof v === 'number') return Number.isFinite(v) ? msToNanos(v) : null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : msToNanos(v.getTime());
  if (typeof v === 'string') {
    const strict = parseRfc3339Nanos(v);
    if (strict !== undefined) return strict;
    // Be forgiving about how the engine serialised a date; the query side stays strict.
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? null : msToNanos(ms);
  }
  return null;
}

// ---------- ordering ----------

/**
 * Total order within one domain. Strings compare by Unicode code point, which is what the
 * server's binary collations and Elasticsearch keyword sorting do (UTF-16 order differs for
 * characters outside the BMP).
 */
export function compareScalars(a: Scalar, b: Scalar): number {
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

// Surrogates (astral code points) must rank above U+E000..U+FFFF; shift both ranges.
function codeUnitRank(u: number): number {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000;
  if (u >= 0xe000) return u - 0x800;
  return u;
}
