// List page tokens: the sort key of the last record returned, nothing else (like the
// SQL store's {CloseTime, StartTime, RunID}). A page resumes after that key, so runs
// that start or close between pages neither shift nor repeat the rows that follow, and
// the token stays a few dozen bytes whatever the records hold (memos, search attributes).
import type { RecordOrder, SortValue } from './types';

/** Datetime keys are bigint nanoseconds, which JSON cannot hold: they travel as {"n": "<digits>"}. */
type Encoded = string | number | boolean | null | { n: string };

export function encodePageToken(key: readonly SortValue[]): Buffer {
  const encoded: Encoded[] = key.map((v) => (typeof v === 'bigint' ? { n: v.toString() } : v));
  return Buffer.from(JSON.stringify(encoded));
}

/**
 * The key a token carries, checked against the order of the query it is used with
 * (a token of another query has another shape). undefined: the token is not one.
 */
export function decodePageToken(token: Uint8Array, order: RecordOrder): SortValue[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(token).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(raw) || raw.length !== order.size || typeof raw[raw.length - 1] !== 'string') return undefined;
  const key: SortValue[] = [];
  for (const v of raw as unknown[]) {
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
      key.push(v);
    else if (
      v &&
      typeof v === 'object' &&
      typeof (v as { n?: unknown }).n === 'string' &&
      /^-?\d{1,30}$/.test((v as { n: string }).n)
    )
      key.push(BigInt((v as { n: string }).n));
    else return undefined;
  }
  return key;
}
