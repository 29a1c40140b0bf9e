// The listings' cursors: the engine's visibility page token, wrapped into a short,
// opaque, URL-safe string (base64url of a version byte and the token). Clients pass
// them back as they got them; the wrapping is ours to change, the version byte says
// how to unwrap. A real Temporal on SQL visibility pages with the JSON
// {"CloseTime","StartTime","RunID"}: that shape is packed into 40 bytes (version 2),
// any other token travels as it is (version 1). Both unwrap to the exact token bytes.
import { ValidationError } from '../errors';

const RAW = 1;
const SQL = 2;
const SQL_SIZE = 12 + 12 + 16;
const BASE64URL = /^[A-Za-z0-9_-]{2,4096}$/;

export function encodeCursor(token: Uint8Array): string {
  const packed = packSqlToken(Buffer.from(token).toString('utf8'));
  const body = packed ? Buffer.concat([Buffer.from([SQL]), packed]) : Buffer.concat([Buffer.from([RAW]), Buffer.from(token)]);
  return body.toString('base64url');
}

/** The engine token a cursor wraps; a 400 naming query.cursor when it is not one of ours. */
export function decodeCursor(cursor: string): Buffer {
  const body = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
  const payload = body.subarray(1);
  if (body[0] === RAW && payload.length > 0) return payload;
  const sql = body[0] === SQL && payload.length === SQL_SIZE ? unpackSqlToken(payload) : undefined;
  if (sql) return Buffer.from(sql);
  throw invalidCursor();
}

export function invalidCursor(): ValidationError {
  const message = 'not a cursor this service handed out (pass next_cursor back as it was given)';
  return new ValidationError(`invalid query: cursor: ${message}`, [{ path: 'query.cursor', message, code: 'invalid_cursor' }]);
}

// ---- the SQL store's token ----------------------------------------------------------

const TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Go's RFC 3339 form of a time.Time in UTC: fraction without trailing zeros, none when zero. */
function formatTime(seconds: bigint, nanos: number): string | undefined {
  const date = new Date(Number(seconds) * 1000);
  if (nanos > 999_999_999 || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return undefined;
  const base = date.toISOString().slice(0, 19);
  const fraction = nanos ? `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${base}${fraction}Z`;
}

function sqlToken(close: string, start: string, runId: string): string {
  return JSON.stringify({ CloseTime: close, StartTime: start, RunID: runId });
}

/** 40 bytes for a token of exactly that shape (it must unpack to the same bytes), else undefined. */
function packSqlToken(text: string): Buffer | undefined {
  let t: { CloseTime?: unknown; StartTime?: unknown; RunID?: unknown };
  try {
    t = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!t || typeof t.CloseTime !== 'string' || typeof t.StartTime !== 'string' || typeof t.RunID !== 'string' || !UUID.test(t.RunID)) return undefined;
  const out = Buffer.alloc(SQL_SIZE);
  for (const [i, s] of [t.CloseTime, t.StartTime].entries()) {
    const m = TIME.exec(s);
    const ms = m ? Date.parse(`${m[1]}Z`) : NaN;
    if (!m || Number.isNaN(ms)) return undefined;
    out.writeBigInt64BE(BigInt(ms / 1000), i * 12);
    out.writeUInt32BE(Number((m[2] ?? '').padEnd(9, '0')), i * 12 + 8);
  }
  Buffer.from(t.RunID.replace(/-/g, ''), 'hex').copy(out, 24);
  return unpackSqlToken(out) === text ? out : undefined;
}

/** The token 40 packed bytes stand for; undefined when they hold no valid times. */
function unpackSqlToken(b: Buffer): string | undefined {
  const close = formatTime(b.readBigInt64BE(0), b.readUInt32BE(8));
  const start = formatTime(b.readBigInt64BE(12), b.readUInt32BE(20));
  if (!close || !start) return undefined;
  const hex = b.subarray(24, 40).toString('hex');
  return sqlToken(close, start, `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
}
