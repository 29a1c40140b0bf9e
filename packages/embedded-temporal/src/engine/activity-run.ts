// A standalone activity execution (StartActivityExecution): its state, and how
// the real server shows it to workers (activity task), to clients (describe,
// list, outcome). It belongs to no workflow, so it has no history: what a
// workflow's activity records as events is kept here as state.
import type { Failure, Payload, Payloads, RetryPolicy } from './state';
import type { VisibilityRecord } from '../visibility/query';
import { PendingActivityState, durFromMs, tsFromMs } from '../proto';
import { retryPolicyToWire } from './retry';
import { encodeToken } from './task-token';
import { decodePayloadValue } from './search-attributes';

/** temporal.api.enums.v1.ActivityExecutionStatus */
export const ActivityStatus = {
  RUNNING: 1,
  COMPLETED: 2,
  FAILED: 3,
  CANCELED: 4,
  TERMINATED: 5,
  TIMED_OUT: 6,
} as const;

/** The status as the real server names it in its refusals ("activity is in terminal state Completed"). */
export const STATUS_NAME: Record<number, 'Running' | 'Completed' | 'Failed' | 'Canceled' | 'Terminated' | 'TimedOut'> =
  {
    1: 'Running',
    2: 'Completed',
    3: 'Failed',
    4: 'Canceled',
    5: 'Terminated',
    6: 'TimedOut',
  };

export interface ActivityOutcome {
  result?: Payloads;
  failure?: Failure;
  retryState?: number;
}

export interface ActivityRun {
  namespace: string;
  activityId: string;
  runId: string;
  activityType: string;
  taskQueue: string;
  input?: Payloads;
  header?: object;
  userMetadata?: object;
  priority?: object;
  searchAttributes?: Record<string, Payload>;
  requestId: string;
  status: number;
  scheduleTime: number;
  /** When the first attempt may be dispatched (schedule time plus the start delay). */
  executionTime: number;
  startDelayMs: number;
  scheduleToCloseMs: number;
  scheduleToStartMs: number;
  startToCloseMs: number;
  heartbeatMs: number;
  retryPolicy: RetryPolicy;
  attempt: number;
  attemptScheduledTime: number;
  /** Set while an attempt runs on a worker. */
  startedTime?: number;
  lastStartedTime?: number;
  lastWorkerIdentity?: string;
  heartbeatDetails?: Payloads;
  lastHeartbeatTime?: number;
  heartbeatCount: number;
  lastFailure?: Failure;
  lastAttemptCompleteTime?: number;
  /** Set while waiting for the next attempt (or for the start delay). */
  retryAt?: number;
  currentRetryIntervalMs?: number;
  cancelRequest?: { identity?: string; reason?: string; requestId?: string };
  terminateRequestId?: string;
  closeTime?: number;
  outcome?: ActivityOutcome;
  transitions: number;
}

export function activityKey(namespace: string, activityId: string, runId: string): string {
  return `${namespace}\u0000${activityId}\u0000${runId}`;
}

export function isRunning(a: ActivityRun): boolean {
  return a.status === ActivityStatus.RUNNING;
}

/** Activity tokens of both kinds share one format; a standalone one names no workflow. */
export function activityTaskToken(a: ActivityRun): Buffer {
  return encodeToken({ n: a.namespace, w: '', r: a.runId, k: 'a', a: a.attempt, i: a.activityId });
}

/** The activity task a poller gets, as the real server fills it for a standalone activity. */
export function activityTask(a: ActivityRun): object {
  return {
    taskToken: activityTaskToken(a),
    workflowNamespace: a.namespace,
    workflowExecution: {},
    activityType: { name: a.activityType },
    activityId: a.activityId,
    header: a.header,
    input: a.input,
    heartbeatDetails: a.heartbeatDetails,
    scheduledTime: tsFromMs(a.scheduleTime),
    currentAttemptScheduledTime: tsFromMs(a.attemptScheduledTime),
    startedTime: tsFromMs(a.startedTime!),
    attempt: a.attempt,
    scheduleToCloseTimeout: durFromMs(a.scheduleToCloseMs),
    startToCloseTimeout: durFromMs(a.startToCloseMs),
    heartbeatTimeout: durFromMs(a.heartbeatMs),
    retryPolicy: retryPolicyToWire(a.retryPolicy),
    priority: a.priority,
    activityRunId: a.runId,
  };
}

function runState(a: ActivityRun): number | undefined {
  if (!isRunning(a)) return undefined;
  if (a.startedTime === undefined) return PendingActivityState.SCHEDULED;
  return a.cancelRequest ? PendingActivityState.CANCEL_REQUESTED : PendingActivityState.STARTED;
}

const optTs = (ms: number | undefined) => (ms === undefined ? undefined : tsFromMs(ms));

export interface DescribeOptions {
  includeHeartbeatDetails?: boolean;
  includeLastFailure?: boolean;
}

/** ActivityExecutionInfo: what DescribeActivityExecution shows. */
export function activityInfo(a: ActivityRun, opts: DescribeOptions = {}): object {
  return {
    activityId: a.activityId,
    runId: a.runId,
    activityType: { name: a.activityType },
    status: a.status,
    runState: runState(a),
    taskQueue: a.taskQueue,
    scheduleToCloseTimeout: durFromMs(a.scheduleToCloseMs),
    scheduleToStartTimeout: durFromMs(a.scheduleToStartMs),
    startToCloseTimeout: durFromMs(a.startToCloseMs),
    heartbeatTimeout: durFromMs(a.heartbeatMs),
    retryPolicy: retryPolicyToWire(a.retryPolicy),
    heartbeatDetails: opts.includeHeartbeatDetails ? a.heartbeatDetails : undefined,
    lastHeartbeatTime: optTs(a.lastHeartbeatTime),
    lastStartedTime: optTs(a.lastStartedTime),
    attempt: a.attempt,
    executionDuration: a.closeTime === undefined ? undefined : durFromMs(a.closeTime - a.scheduleTime),
    scheduleTime: tsFromMs(a.scheduleTime),
    expirationTime: a.scheduleToCloseMs > 0 ? tsFromMs(a.scheduleTime + a.scheduleToCloseMs) : undefined,
    closeTime: optTs(a.closeTime),
    lastFailure: opts.includeLastFailure ? a.lastFailure : undefined,
    lastWorkerIdentity: a.lastWorkerIdentity,
    currentRetryInterval: a.currentRetryIntervalMs === undefined ? undefined : durFromMs(a.currentRetryIntervalMs),
    lastAttemptCompleteTime: optTs(a.lastAttemptCompleteTime),
    nextAttemptScheduleTime: isRunning(a) ? optTs(a.retryAt) : undefined,
    priority: a.priority,
    stateTransitionCount: a.transitions,
    searchAttributes: { indexedFields: a.searchAttributes ?? {} },
    header: a.header,
    userMetadata: a.userMetadata,
    canceledReason: a.cancelRequest?.reason,
    totalHeartbeatCount: a.heartbeatCount || undefined,
    startDelay: a.startDelayMs > 0 ? durFromMs(a.startDelayMs) : undefined,
    executionTime: tsFromMs(a.executionTime),
  };
}

/** ActivityExecutionListInfo: a row of ListActivityExecutions. */
export function activityListInfo(a: ActivityRun): object {
  return {
    activityId: a.activityId,
    runId: a.runId,
    activityType: { name: a.activityType },
    scheduleTime: tsFromMs(a.scheduleTime),
    closeTime: optTs(a.closeTime),
    status: a.status,
    searchAttributes: { indexedFields: a.searchAttributes ?? {} },
    taskQueue: a.taskQueue,
    stateTransitionCount: a.transitions,
    executionDuration: a.closeTime === undefined ? undefined : durFromMs(a.closeTime - a.scheduleTime),
    executionTime: tsFromMs(a.executionTime),
  };
}

/** The fields the real server's activity queries filter on, beside its custom search attributes. */
export const ACTIVITY_QUERY_FIELDS = ['ActivityId', 'ActivityType'] as const;

/**
 * The visibility record List/Count match. ActivityId and ActivityType travel as
 * Keyword attributes, so the workflow query language serves activity queries.
 */
export function activityRecord(a: ActivityRun): VisibilityRecord {
  const custom: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(a.searchAttributes ?? {})) custom[k] = decodePayloadValue(p);
  return {
    workflowId: a.activityId,
    runId: a.runId,
    workflowType: a.activityType,
    taskQueue: a.taskQueue,
    status: STATUS_NAME[a.status],
    startTime: a.scheduleTime,
    executionTime: a.executionTime,
    closeTime: a.closeTime,
    stateTransitionCount: a.transitions,
    searchAttributes: { ...custom, ActivityId: a.activityId, ActivityType: a.activityType },
  };
}
