// The size and count limits the real Temporal server enforces: the one place that
// knows their defaults and their dynamic-config keys (the server's
// common/dynamicconfig/constants.go), how payloads are measured, and the words the
// server answers with. `--dynamic-config-value limit.historyCount.error=50` lowers a
// limit here exactly as it does on `temporal server start-dev`, so tests can push a
// run past a limit in a few events and see it break as it would on real Temporal.
import type { Logger } from 'pino';
import { lookupType } from '../proto';
import type { Failure, Payload, Payloads } from './state';

const KiB = 1024;
const MiB = 1024 * KiB;

export interface Limits {
  /** One payload-carrying field (input, result, details, failure...). */
  blobSizeError: number;
  blobSizeWarn: number;
  memoSizeError: number;
  memoSizeWarn: number;
  /** A run's history, in encoded bytes: over the error limit the run is terminated. */
  historySizeError: number;
  historySizeWarn: number;
  historySizeSuggestContinueAsNew: number;
  /** A run's history, in events. */
  historyCountError: number;
  historyCountWarn: number;
  historyCountSuggestContinueAsNew: number;
}

/** Dynamic-config key and default of each limit, as the real server names them. */
export const LIMIT_KEYS: Record<keyof Limits, [key: string, dflt: number]> = {
  blobSizeError: ['limit.blobSize.error', 2 * MiB],
  blobSizeWarn: ['limit.blobSize.warn', 512 * KiB],
  memoSizeError: ['limit.memoSize.error', 2 * MiB],
  memoSizeWarn: ['limit.memoSize.warn', 2 * KiB],
  historySizeError: ['limit.historySize.error', 50 * MiB],
  historySizeWarn: ['limit.historySize.warn', 10 * MiB],
  historySizeSuggestContinueAsNew: ['limit.historySize.suggestContinueAsNew', 4 * MiB],
  historyCountError: ['limit.historyCount.error', 50 * KiB],
  historyCountWarn: ['limit.historyCount.warn', 10 * KiB],
  historyCountSuggestContinueAsNew: ['limit.historyCount.suggestContinueAsNew', 4 * KiB],
};

/**
 * The largest request the frontend decodes: grpc-go's default receive limit, which the
 * real frontend keeps (no dynamic-config key changes it). Larger ones get
 * RESOURCE_EXHAUSTED before any handler runs.
 */
export const GRPC_MAX_RECEIVE_BYTES = 4 * MiB;

/** The workflow task completion size the real server advertises (DescribeNamespace), unchecked here. */
export const WFT_COMPLETION_SIZE_LIMIT = 40 * MiB;

export const DEFAULT_LIMITS: Limits = Object.fromEntries(
  Object.entries(LIMIT_KEYS).map(([k, [, d]]) => [k, d]),
) as unknown as Limits;

/** The limits with `--dynamic-config-value` overrides; an unusable value keeps the default (logged). */
export function limitsFromDynamicConfig(config: Record<string, unknown>, logger?: Logger): Limits {
  const out = { ...DEFAULT_LIMITS };
  for (const [name, [key]] of Object.entries(LIMIT_KEYS) as [keyof Limits, [string, number]][]) {
    if (!(key in config)) continue;
    const v = config[key];
    if (typeof v === 'number' && Number.isInteger(v)) out[name] = v;
    else logger?.warn({ key, value: v }, 'dynamic config value is not an integer; the default stays');
  }
  return out;
}

/**
 * How many closed runs a persisting server keeps in memory before the oldest move to its archive
 * file (Engine.maxClosedInMemory), from the dynamic config key of this server's own (the real
 * server keeps none in memory: its database is the store). Undefined: the engine's default.
 */
export const CLOSED_IN_MEMORY_KEY = 'embedded.maxClosedRunsInMemory';

export function closedInMemoryFromDynamicConfig(config: Record<string, unknown>, logger?: Logger): number | undefined {
  if (!(CLOSED_IN_MEMORY_KEY in config)) return undefined;
  const v = config[CLOSED_IN_MEMORY_KEY];
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  logger?.warn(
    { key: CLOSED_IN_MEMORY_KEY, value: v },
    'dynamic config value is not a whole number; the default stays',
  );
  return undefined;
}

// ---- the server's messages ---------------------------------------------------

export const BLOB_TOO_LARGE = 'Blob data size exceeds limit.';
export const MEMO_TOO_LARGE = 'Memo size exceeds limit.';
export const RESULT_TOO_LARGE = 'Complete result exceeds size limit.';
export const FAILURE_TOO_LARGE = 'Failure exceeds size limit.';
export const CANCEL_DETAILS_TOO_LARGE = 'Cancel details exceed size limit.';
export const HEARTBEAT_TOO_LARGE = 'Heartbeat details exceed size limit.';
export const HISTORY_SIZE_TOO_LARGE = 'Workflow history size exceeds limit.';
export const HISTORY_COUNT_TOO_LARGE = 'Workflow history count exceeds limit.';
/** Who the server says terminated a run it stopped itself. */
export const HISTORY_SERVICE_IDENTITY = 'history-service';

/** A failure the server makes up (no source: the real server sets none on these). */
export function serverFailure(message: string, nonRetryable: boolean, cause?: Failure): Failure {
  return { message, serverFailureInfo: nonRetryable ? { nonRetryable } : {}, cause };
}

// ---- measuring ------------------------------------------------------------------

// Sizes are protobuf-encoded sizes, as Go's proto.Size measures them (Writer.len
// needs no buffer: nothing is copied).
function sizer(typeName: string): (v: object | undefined | null) => number {
  const type = lookupType(typeName);
  return (v) => (v ? type.encode(v as never).len : 0);
}

export const payloadsSize = sizer('temporal.api.common.v1.Payloads');
export const memoSize = sizer('temporal.api.common.v1.Memo');
export const failureSize = sizer('temporal.api.failure.v1.Failure');
export const anySize = sizer('google.protobuf.Any');

/** sum(len(key) + size(payloads)): the server's measure of marker details. */
export function payloadsMapSize(m: Record<string, Payloads> | undefined): number {
  return Object.entries(m ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + payloadsSize(v), 0);
}

/** sum(len(key) + len(data)): the server's measure of search attribute and memo upserts (data only). */
export function payloadDataMapSize(m: Record<string, Payload> | undefined): number {
  return Object.entries(m ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + (v?.data?.length ?? 0), 0);
}

// ---- checking --------------------------------------------------------------------

export interface BlobContext {
  namespace: string;
  workflowId?: string;
  runId?: string;
  /** The RPC or command, as the server names it in its warning. */
  operation: string;
}

/**
 * True when `size` is past the error limit. Past the warn limit it is logged first, as
 * the server's CheckEventBlobSizeLimit does; the error limit is only looked at past the
 * warn one, as there.
 */
export function overLimit(
  eng: { limits: Limits; logger: Logger },
  size: number,
  ctx: BlobContext,
  kind: 'blob' | 'memo' = 'blob',
): boolean {
  const l = eng.limits;
  const [warn, error] = kind === 'memo' ? [l.memoSizeWarn, l.memoSizeError] : [l.blobSizeWarn, l.blobSizeError];
  if (size <= warn) return false;
  eng.logger.warn(
    {
      'wf-namespace': ctx.namespace,
      'wf-id': ctx.workflowId,
      'wf-run-id': ctx.runId,
      'wf-size': size,
      'blob-size-violation-operation': ctx.operation,
    },
    'Blob data size exceeds the warning limit.',
  );
  return size > error;
}

/**
 * A failure cut down to about `maxSize` bytes, keeping what matters most first
 * (type, source, message, stack, then causes), as the server shrinks an oversized
 * failure it keeps as the cause of its own.
 */
export function truncateFailure(f: Failure | undefined, maxSize: number, depth = 20): Failure | undefined {
  if (!f) return undefined;
  let room = maxSize;
  const cut = (s: string | undefined): string | undefined => {
    const kept = truncateUtf8(s ?? '', room);
    room -= Buffer.byteLength(kept) + (kept ? 4 : 0);
    return kept || undefined;
  };
  const out: Failure = {};
  const app = f.applicationFailureInfo;
  if (app) {
    out.applicationFailureInfo = { nonRetryable: app.nonRetryable, type: cut(app.type) };
    room -= 8;
  } else if (f.serverFailureInfo) {
    out.serverFailureInfo = { nonRetryable: f.serverFailureInfo.nonRetryable };
    room -= 4;
  }
  out.source = cut(f.source);
  out.message = cut(f.message);
  out.stackTrace = cut(f.stackTrace);
  if (f.cause && room > 4 && depth > 0) out.cause = truncateFailure(f.cause, room - 4, depth - 1);
  return out;
}

/** At most `max` bytes of `s`, never splitting a character. */
function truncateUtf8(s: string, max: number): string {
  if (max <= 0) return '';
  const b = Buffer.from(s);
  if (b.length <= max) return s;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString();
}
