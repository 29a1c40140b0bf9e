// How PostgreSQL values reach the model: as JSON that carries them without
// loss or surprise (the datastore contract's rows), and the type parsers that
// keep dates, timestamps and intervals as the text the user stored.
import pg from 'pg';

/** A value as JSON can carry it without loss or surprise (the contract's rows). */
export function jsonSafe(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v); // NaN, ±Infinity (also 'infinity' timestamps)
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (Buffer.isBuffer(v)) return `<${v.length} bytes>`;
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

type Parser = (s: string) => unknown;
// Typed by pg with the builtin OIDs only, which leaves out the array types.
const builtinParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => Parser;
const textArray = builtinParser(1009);
const isoTimestamp = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(isoTimestamp) : typeof v === 'string' ? v.replace(/^(\d{4,}-\d\d-\d\d) (?=\d)/, '$1T') : v;
const keepText = (s: string) => s;

// pg turns a date or a timestamp without time zone into a Date in the process's time zone, which
// shifts it once printed as UTC; and an interval into an object. Their text is what the user stored.
const OWN_PARSERS = new Map<number, Parser>([
  [1082, keepText], // date
  [1182, textArray], // date[]
  [1114, isoTimestamp], // timestamp
  [1115, (s) => isoTimestamp(textArray(s))], // timestamp[]
  [1186, keepText], // interval
  [1187, textArray], // interval[]
]);

export const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format !== 'binary' && OWN_PARSERS.get(oid)) || builtinParser(oid, format)) as typeof pg.types.getTypeParser,
};
