// Temporal visibility as the listings (tasks, sessions) read it: one page of a
// query, newest first where the store can sort, and the fields of a listed run
// (search attributes as stored, memos through the payload codecs, timestamps to
// the millisecond).
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { decodeCursor, encodeCursor, invalidCursor } from './list-cursor';
import { decodePayload } from '../../common/json-payload';

export type ListedRun = temporal.api.workflow.v1.IWorkflowExecutionInfo;

export interface RunsPage {
  runs: ListedRun[];
  /** The engine's token for the next page; undefined on the last. */
  next?: Uint8Array;
}

/** A string literal of the visibility query language. */
export const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Whether a client's server sorts (Elasticsearch, the embedded engine) or refuses ORDER BY (SQL stores); learnt on the first list. */
const sorts = new WeakMap<Client, boolean>();

/**
 * One page of `where`, newest started first. SQL visibility stores (a real
 * Temporal on SQLite, PostgreSQL, MySQL) refuse ORDER BY; their own order is
 * open runs first, then the most recently closed. A token the server refuses
 * is the client's cursor at fault: a 400 naming query.cursor.
 */
export async function listRuns(
  client: Client,
  namespace: string,
  where: string,
  pageSize: number,
  token?: Uint8Array,
): Promise<RunsPage> {
  const request = (query: string) =>
    client.workflowService.listWorkflowExecutions({ namespace, query, pageSize, nextPageToken: token });
  let res;
  try {
    if (sorts.get(client) === false) res = await request(where);
    else {
      try {
        res = await request(`${where} ORDER BY StartTime DESC`);
        sorts.set(client, true);
      } catch (err) {
        if (!refusesOrderBy(err)) throw err;
        sorts.set(client, false);
        res = await request(where);
      }
    }
  } catch (err) {
    // The embedded engine says INVALID_ARGUMENT; the SQL store fails to parse it (UNKNOWN).
    const code = (err as { code?: number }).code;
    if (token?.length && (code === GrpcStatus.INVALID_ARGUMENT || code === GrpcStatus.UNKNOWN)) throw invalidCursor();
    throw err;
  }
  return { runs: res.executions ?? [], next: res.nextPageToken?.length ? res.nextPageToken : undefined };
}

function refusesOrderBy(err: unknown): boolean {
  const e = err as { code?: number; message?: string; details?: string };
  return e.code === GrpcStatus.INVALID_ARGUMENT && /ORDER BY/i.test(`${e.message ?? ''} ${e.details ?? ''}`);
}

/** The engine token of a client's cursor (undefined: the first page); 400 when it is not one. */
export const tokenOf = (cursor: string | undefined): Buffer | undefined => (cursor ? decodeCursor(cursor) : undefined);

/** The cursor clients get for the next page, or null on the last. */
export const cursorOf = (next: Uint8Array | undefined): string | null => (next ? encodeCursor(next) : null);

/**
 * A memo field as the workflow's starter set it. Memos pass through the client's
 * payload codecs (encrypted at rest), search attributes do not: a raw list call
 * leaves the decoding to us.
 */
export async function decodeMemo(client: Client, p: Payload | null | undefined): Promise<unknown> {
  if (!p) return undefined;
  let payloads = [p];
  try {
    // Codecs decode in the reverse of their encoding order.
    for (const codec of [...client.options.loadedDataConverter.payloadCodecs].reverse())
      payloads = await codec.decode(payloads);
  } catch {
    return undefined; // unreadable here (e.g. a retired key): callers fall back
  }
  return decodePayload(payloads[0]);
}

/** A keyword search attribute's value (stored as a list or a single value). */
export function keyword(run: ListedRun, name: string): string | undefined {
  const v = decodePayload(run.searchAttributes?.indexedFields?.[name]);
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' ? one : undefined;
}

/** A protobuf Timestamp as ISO 8601 to the millisecond (seconds alone would put a close before its start). */
export function isoTime(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null {
  if (!ts) return null;
  return new Date(Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000)).toISOString();
}
