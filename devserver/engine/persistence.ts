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
  const { history: _history, ...rest } = e;
  return toJsonBuffer(rest);
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
