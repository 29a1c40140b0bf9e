// StartActivityExecution: the real frontend's checks and normalization (timeouts
// deduced as for a workflow's activity with no run timeout, the default retry
// policy), then the activity id's reuse and conflict policies and request-id
// de-duplication, as the real server decides them.
import type { Engine } from './engine';
import type { RetryPolicy } from './state';
import { msFromDur } from '../proto';
import { RpcError, alreadyExists, invalidArgument } from '../errors';
import { normalizeRetryPolicy } from './retry';
import { validateSearchAttributes, withoutNilPayloads } from './search-attributes';
import type { ActivityExecutions } from './activity-executions';
import { ActivityRun, ActivityStatus, isRunning } from './activity-run';
import { armActivityRun } from './activity-transitions';

const MAX_ID_LENGTH = 1000;
const REUSE = { ALLOW_DUPLICATE: 1, ALLOW_DUPLICATE_FAILED_ONLY: 2, REJECT_DUPLICATE: 3 };
const CONFLICT = { FAIL: 1, USE_EXISTING: 2 };

export interface ActivityStart {
  run: ActivityRun;
  reuse: number;
  conflict: number;
}

function duration(d: unknown, name: string): number {
  const ms = msFromDur(d);
  if (ms < 0) throw invalidArgument(`invalid ${name}: negative duration`);
  return ms;
}

/** The real server's words for a bad retry policy ("... on retry policy."). */
function retryPolicyOf(wire: unknown): RetryPolicy {
  try {
    return normalizeRetryPolicy(wire ?? {}, 'RetryPolicy');
  } catch (err) {
    if (err instanceof RpcError)
      throw invalidArgument(err.message.replace(/^RetryPolicy: (.*)\.$/, '$1 on retry policy.'));
    throw err;
  }
}

interface Timeouts {
  s2c: number;
  s2s: number;
  st2c: number;
  hb: number;
}

/** Deduces the unset timeouts from the set ones; one of schedule-to-close and start-to-close is needed. */
function timeoutsOf(req: any, activityId: string, activityType: string): Timeouts {
  let s2c = duration(req.scheduleToCloseTimeout, 'ScheduleToCloseTimeout');
  let s2s = duration(req.scheduleToStartTimeout, 'ScheduleToStartTimeout');
  let st2c = duration(req.startToCloseTimeout, 'StartToCloseTimeout');
  const hb = duration(req.heartbeatTimeout, 'HeartbeatTimeout');
  if (s2c > 0) {
    s2s = s2s > 0 ? Math.min(s2s, s2c) : s2c;
    st2c = st2c > 0 ? Math.min(st2c, s2c) : s2c;
  } else if (st2c <= 0) {
    throw invalidArgument(
      `a valid StartToCloseTimeout or ScheduleToCloseTimeout must be set on the activity. ActivityId=${activityId} ActivityType=${activityType}`,
    );
  } else s2c = 0;
  return { s2c, s2s, st2c, hb: Math.min(hb, st2c) };
}

/** Checks a StartActivityExecution request in the real frontend's order; returns the run it would create. */
export function parseActivityStart(eng: Engine, req: any): ActivityStart {
  const startDelayMs = duration(req.startDelay, 'StartDelay');
  if (!req.taskQueue?.name) throw invalidArgument('taskQueue is not set');
  const activityId: string = req.activityId ?? '';
  const activityType: string = req.activityType?.name ?? '';
  if (!activityId) throw invalidArgument('activityId is not set');
  if (!activityType) throw invalidArgument('activityType is not set');
  const retryPolicy = retryPolicyOf(req.retryPolicy);
  if (activityId.length > MAX_ID_LENGTH)
    throw invalidArgument(`activityId exceeds length limit. Length=${activityId.length} Limit=${MAX_ID_LENGTH}`);
  if (activityType.length > MAX_ID_LENGTH)
    throw invalidArgument(`activityType exceeds length limit. Length=${activityType.length} Limit=${MAX_ID_LENGTH}`);
  const t = timeoutsOf(req, activityId, activityType);
  validateSearchAttributes(eng, req.namespace, req.searchAttributes?.indexedFields, invalidArgument);
  const now = eng.now();
  const run: ActivityRun = {
    namespace: req.namespace,
    activityId,
    runId: eng.newId(),
    activityType,
    taskQueue: req.taskQueue.name,
    input: req.input,
    header: req.header,
    userMetadata: req.userMetadata,
    priority: req.priority,
    searchAttributes: withoutNilPayloads(req.searchAttributes?.indexedFields),
    requestId: req.requestId || eng.newId(),
    status: ActivityStatus.RUNNING,
    scheduleTime: now,
    executionTime: now + startDelayMs,
    startDelayMs,
    scheduleToCloseMs: t.s2c,
    scheduleToStartMs: t.s2s,
    startToCloseMs: t.st2c,
    heartbeatMs: t.hb,
    retryPolicy,
    attempt: 1,
    attemptScheduledTime: now + startDelayMs,
    retryAt: startDelayMs > 0 ? now + startDelayMs : undefined,
    heartbeatCount: 0,
    transitions: 0,
  };
  return { run, reuse: req.idReusePolicy || REUSE.ALLOW_DUPLICATE, conflict: req.idConflictPolicy || CONFLICT.FAIL };
}

function alreadyStarted(existing: ActivityRun): RpcError {
  const err = alreadyExists('activity execution already started');
  return new RpcError(err.code, err.message, {
    typeName: 'temporal.api.errordetails.v1.ActivityExecutionAlreadyStartedFailure',
    value: { startRequestId: existing.requestId, runId: existing.runId },
  });
}

/** Starts the run unless the id's newest run stands in the way; a retried request gets that run. */
export function startActivityRun(reg: ActivityExecutions, s: ActivityStart): { run: ActivityRun; started: boolean } {
  const existing = reg.currentRun(s.run.namespace, s.run.activityId);
  if (existing) {
    if (existing.requestId === s.run.requestId) return { run: existing, started: false };
    if (isRunning(existing)) {
      if (s.conflict === CONFLICT.USE_EXISTING) return { run: existing, started: false };
      throw alreadyStarted(existing);
    }
    if (s.reuse === REUSE.REJECT_DUPLICATE) throw alreadyStarted(existing);
    if (s.reuse === REUSE.ALLOW_DUPLICATE_FAILED_ONLY && existing.status === ActivityStatus.COMPLETED)
      throw alreadyStarted(existing);
  }
  reg.add(s.run);
  armActivityRun(reg, s.run);
  return { run: s.run, started: true };
}
