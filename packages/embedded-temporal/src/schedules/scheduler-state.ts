// The persisted state of one schedule and the small rules that read it. The
// shape follows what Temporal's scheduler workflow keeps (schedule + info +
// internal state) so Describe/List can be answered straight from it.
import type { Payload, Payloads, Failure } from '../engine/state';
import { OverlapPolicy } from '../proto';

/** An action waiting to be started (or skipped) by the overlap policy. */
export interface BufferedStart {
  nominalMs: number;
  actualMs: number;
  /** 0 = resolve to the schedule's policy when processed, so updates to the policy apply. */
  overlapPolicy: number;
  /** Trigger or backfill: not subject to pause, remaining actions or catchup window. */
  manual: boolean;
}

export interface OngoingBackfill {
  /** Exclusive lower bound (the request's start minus 1 ms, so the start itself counts). */
  startMs: number;
  endMs: number;
  overlapPolicy: number;
}

export interface ActionResult {
  scheduleMs: number;
  actualMs: number;
  workflowId: string;
  /** First run id of the started chain. */
  runId: string;
  status: number;
}

export interface RunningWorkflow {
  workflowId: string;
  runId: string;
}

export interface ScheduleRecord {
  namespace: string;
  namespaceId: string;
  scheduleId: string;
  /** Canonical spec (cron strings and calendars compiled to structured calendars). */
  spec: any;
  action: any;
  policies: any;
  state: { paused?: boolean; notes?: string; limitedActions?: boolean; remainingActions?: number };
  memo?: Record<string, Payload>;
  searchAttributes?: Record<string, Payload>;
  /** Request id of the CreateSchedule call, so a retried create succeeds. */
  requestId: string;
  conflictToken: number;
  createTime: number;
  updateTime?: number;
  /** Spec times up to here have been handled (started, buffered, skipped or missed). */
  lastProcessedTime: number;
  actionCount: number;
  missedCatchupWindow: number;
  overlapSkipped: number;
  bufferDropped: number;
  running: RunningWorkflow[];
  recent: ActionResult[];
  buffer: BufferedStart[];
  backfills: OngoingBackfill[];
  lastCompletionResult?: Payloads;
  continuedFailure?: Failure;
}

export const INITIAL_CONFLICT_TOKEN = 1;
/** The server's tweakables: defaults and limits of the scheduler workflow. */
export const DEFAULT_CATCHUP_WINDOW_MS = 365 * 24 * 3600_000;
export const MIN_CATCHUP_WINDOW_MS = 10_000;
export const RETENTION_MS = 7 * 24 * 3600_000;
export const MAX_BUFFER_SIZE = 1000;
export const BACKFILLS_PER_ITERATION = 10;
export const RECENT_ACTION_COUNT = 10;
export const FUTURE_ACTION_COUNT = 10;
export const RECENT_ACTION_COUNT_FOR_LIST = 5;
export const FUTURE_ACTION_COUNT_FOR_LIST = 5;
export const SPEC_FIELD_LIMIT_FOR_LIST = 10;
export const MAX_MATCHING_TIMES = 1000;
export const NOTES_SIZE_LIMIT = 1000;

export function scheduleKey(namespace: string, scheduleId: string): string {
  return `${namespace}\u0000${scheduleId}`;
}

export function storeKey(rec: ScheduleRecord): string {
  return `s/${rec.namespace}/${rec.scheduleId}`;
}

export function resolveOverlap(rec: ScheduleRecord, policy: number | undefined): number {
  if (policy) return policy;
  return rec.policies?.overlapPolicy || OverlapPolicy.SKIP;
}

export function catchupWindowMs(rec: ScheduleRecord): number {
  const cw = rec.policies?.catchupWindow;
  if (!cw) return DEFAULT_CATCHUP_WINDOW_MS;
  const ms = Number(cw.seconds ?? 0) * 1000 + Math.floor(Number(cw.nanos ?? 0) / 1e6);
  return Math.max(ms, MIN_CATCHUP_WINDOW_MS);
}

/**
 * May a scheduled (non-manual) action be taken now? Optionally uses up one of the
 * remaining actions, which like any state change bumps the conflict token.
 */
export function canTakeScheduledAction(rec: ScheduleRecord, manual: boolean, decrement: boolean): boolean {
  if (manual) return true;
  if (rec.state.paused) return false;
  if (!rec.state.limitedActions) return true;
  if ((rec.state.remainingActions ?? 0) > 0) {
    if (decrement) {
      rec.state.remainingActions = (rec.state.remainingActions ?? 0) - 1;
      rec.conflictToken++;
    }
    return true;
  }
  return false;
}

export function hasMoreAllowAllBackfills(rec: ScheduleRecord): boolean {
  return rec.backfills.length > 0 && resolveOverlap(rec, rec.backfills[0].overlapPolicy) === OverlapPolicy.ALLOW_ALL;
}

/** Creation, update or the latest action: idle retention counts from here. */
export function lastEventTime(rec: ScheduleRecord): number {
  const last = rec.recent.length ? rec.recent[rec.recent.length - 1].actualMs : 0;
  return Math.max(last, rec.createTime, rec.updateTime ?? 0);
}

export function conflictTokenBytes(token: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(token));
  return b;
}

/** "2026-01-01T00:00:00Z": Go's RFC3339 of the nominal time truncated to the second. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A search attribute value encoded as the SDKs and server do (JSON, with its type for typed decoding). */
export function searchAttributePayload(value: unknown, type: string): Payload {
  return {
    metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from(type) },
    data: Buffer.from(JSON.stringify(value)),
  };
}

/** Copies a decoded proto map so later mutation of the request cannot reach our state. */
export function cloneFields<T>(fields: Record<string, T> | undefined | null): Record<string, T> | undefined {
  return fields ? { ...fields } : undefined;
}
