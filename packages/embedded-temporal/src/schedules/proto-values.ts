/**
 * Reading google.protobuf Timestamp/Duration values as protobufjs hands them to
 * us: `seconds` may be a number, a Long, a decimal string or a bigint depending on
 * how the message was decoded or built, and every field may be missing.
 */
import { ScheduleSpecError } from './spec-error';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
/** Largest |seconds| google.protobuf.Duration allows (10,000 years). */
const MAX_DURATION_SECONDS = 315_576_000_000n;

interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

function isLongLike(v: unknown): v is LongLike {
  return typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number';
}

/** Any protobufjs int64 representation as a bigint; missing means 0. */
export function int64(v: unknown): bigint {
  if (v === undefined || v === null || v === '') return 0n;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (typeof v === 'string') return BigInt(v);
  if (isLongLike(v)) {
    const bits = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
    return v.unsigned ? bits : BigInt.asIntN(64, bits);
  }
  throw new ScheduleSpecError(`invalid int64 value ${String(v)}`);
}

function int32(v: unknown): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

/** True when a Timestamp/Duration message is present (protobufjs leaves absent messages null/undefined). */
export function isSet(msg: unknown): boolean {
  return msg !== undefined && msg !== null;
}

/**
 * A Duration as Go's durationpb.AsDuration sees it: nanoseconds, saturated to
 * the int64 range instead of overflowing.
 */
export function durationNanos(msg: unknown): bigint {
  if (!isSet(msg)) return 0n;
  const m = msg as { seconds?: unknown; nanos?: unknown };
  const ns = int64(m.seconds) * 1_000_000_000n + BigInt(int32(m.nanos));
  return ns < INT64_MIN ? INT64_MIN : ns > INT64_MAX ? INT64_MAX : ns;
}

/** Whole seconds of a Duration, truncated toward zero as the scheduler does before any arithmetic. */
export function durationSeconds(msg: unknown): number {
  return Number(durationNanos(msg) / 1_000_000_000n);
}

/** Go's durationpb CheckValid, which the frontend applies to interval and phase. */
export function checkDurationValid(msg: unknown): string | undefined {
  if (!isSet(msg)) return undefined;
  const m = msg as { seconds?: unknown; nanos?: unknown };
  const secs = int64(m.seconds);
  const nanos = int32(m.nanos);
  if (secs > MAX_DURATION_SECONDS || secs < -MAX_DURATION_SECONDS) return 'seconds out of range';
  if (!Number.isInteger(nanos) || nanos <= -1e9 || nanos >= 1e9) return 'nanos out of range';
  if ((secs > 0n && nanos < 0) || (secs < 0n && nanos > 0)) return 'seconds and nanos have different signs';
  return undefined;
}

/** A Timestamp as epoch milliseconds (sub-millisecond part floored, which is exact for comparisons with whole-ms times). */
export function timestampMs(msg: unknown): number {
  const m = msg as { seconds?: unknown; nanos?: unknown };
  return Number(int64(m.seconds)) * 1000 + Math.floor(int32(m.nanos) / 1e6);
}

/** A Duration message for a whole number of nanoseconds, in protobufjs's decoded shape. */
export function durationMessage(ns: bigint): { seconds: number; nanos: number } {
  return { seconds: Number(ns / 1_000_000_000n), nanos: Number(ns % 1_000_000_000n) };
}
