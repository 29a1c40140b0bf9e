// The listings' cursors: the engine's visibility page token, wrapped into an
// opaque, URL-safe string (base64url of a version byte and the token). Clients
// pass them back as they got them; the version byte lets the wrapping change
// later. The embedded engine's token is only its sort key (about 90 characters
// wrapped); a real Temporal on SQL visibility pages with a small JSON of close
// time, start time and run id (about 170).
import { UnprocessableRequestError } from '../../common/errors';

const VERSION = 1;
/** What a cursor looks like (the document states it, so one of another shape is a 400). */
export const CURSOR = /^[A-Za-z0-9_-]{2,4096}$/;

export function encodeCursor(token: Uint8Array): string {
  return Buffer.concat([Buffer.from([VERSION]), Buffer.from(token)]).toString('base64url');
}

/** The engine token a cursor wraps; a 422 naming query.cursor when it is not one of ours. */
export function decodeCursor(cursor: string): Buffer {
  const body = CURSOR.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
  if (body[0] === VERSION && body.length > 1) return body.subarray(1);
  throw invalidCursor();
}

/**
 * Also what a token the engine refuses becomes (a cursor cut short, or from another listing):
 * a 422, since a cursor of the right shape fits the document; only the service knows its own.
 */
export function invalidCursor(): UnprocessableRequestError {
  const message = 'not a cursor this service handed out (pass next_cursor back as it was given)';
  return UnprocessableRequestError.at('query.cursor', message, 'invalid_cursor');
}
