// Encoding of engine state for the durable store, and recovery from it.
// Runs are stored as JSON (binary payload fields as base64) plus their history
// as protobuf-encoded batches, so history bytes are exactly what the SDK sees.
import { decode, encode, lookupType } from '../proto';
import type { Execution, HistoryEvent } from './state';
import type { NamespaceRecord } from './namespaces';

const HISTORY = 'temporal.api.history.v1.History';
const TO_OBJECT = { longs: Number, enums: Number, bytes: Buffer, defaults: false } as const;

function replacer(this: any, key: string, value: unknown): unknown {
  const orig = this[key];
  if (orig instanceof Uint8Array) return { $b: Buffer.from(orig).toString('base64') };
  return value;
}

function reviver(_key: string, value: any): unknown {
  if (value && typeof value === 'object' && typeof value.$b === 'string' && Object.keys(value).length === 1) {
    return Buffer.from(value.$b, 'base64');
  }
  return value;
}

export function toJsonBuffer(v: unknown): Buffer {
  return Buffer.from(JSON.stringify(v, replacer));
}

export function fromJsonBuffer<T>(b: Buffer): T {
  return JSON.parse(b.toString('utf8'), reviver) as T;
}

export function serializeExecution(e: Execution): Buffer {
  // Own enumerable keys only: a packed history (below) is never touched here.
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(e)) if (k !== 'history') rest[k] = (e as unknown as Record<string, unknown>)[k];
  return toJsonBuffer(rest);
}

/**
 * Keeps a closed run's history as one exact-size encoded buffer (about a fifth of
 * the objects' memory), decoded again whenever someone reads it. Closed runs
 * are read rarely (result long polls, describe, replays).
 */
export function packHistory(e: Execution, encoded?: Buffer): void {
  const desc = Object.getOwnPropertyDescriptor(e, 'history');
  if (!desc || !('value' in desc)) return;
  const events = e.history;
  const blob = encoded ?? owned(historyBatch(events));
  // The close event is what result() long polls ask for, right after the close.
  Object.defineProperty(e, 'closeEvent', {
    value: events[events.length - 1],
    configurable: true,
    enumerable: false,
    writable: true,
  });
  Object.defineProperty(e, 'history', {
    configurable: true,
    enumerable: false,
    get: () => decodeHistoryBatch(blob),
    set: (v) => Object.defineProperty(e, 'history', { value: v, writable: true, enumerable: true, configurable: true }),
  });
}

/**
 * The bytes in a buffer of their own. Small buffers from Buffer.from/concat are
 * views on a shared 8 KiB pool slab, and a view kept for long keeps the whole
 * slab alive.
 */
export function owned(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const copy = Buffer.allocUnsafeSlow(b.length);
  b.copy(copy);
  return copy;
}

export function historyBatch(events: HistoryEvent[]): Buffer {
  return Buffer.from(encode(HISTORY, { events }));
}

export function decodeHistoryBatch(b: Buffer): HistoryEvent[] {
  const t = lookupType(HISTORY);
  const obj = t.toObject(decode(HISTORY, b), TO_OBJECT) as { events?: HistoryEvent[] };
  return obj.events ?? [];
}

export function restoreExecution(state: Buffer, appends: Buffer[]): Execution {
  const e = fromJsonBuffer<Execution>(state);
  e.history = appends.flatMap(decodeHistoryBatch);
  return e;
}

export function namespaceValue(ns: NamespaceRecord): Buffer {
  return toJsonBuffer(ns);
}
