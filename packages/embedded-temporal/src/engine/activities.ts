// Activity tasks: scheduling, dispatch, completion/failure/cancellation,
// heartbeats, all four timeouts, and server-side retries per RetryPolicy. The
// command checks and the timeout deduction live in activity-options.ts, finding
// the activity a worker's or client's call names in activity-lookup.ts.
import type { Engine, PollResponse } from './engine';
import type { ActivityInfo, Execution, Failure, Payloads } from './state';
import { EventType, RetryState, TimeoutType, durFromMs, tsFromMs } from '../proto';
import { deduceTimeouts } from './activity-options';
import { decideRetry, normalizeRetryPolicy, retryPolicyToWire, timeoutTypeName } from './retry';
import { scheduleWorkflowTask } from './workflow-tasks';
import { encodeToken } from './task-token';
import { invalidArgument } from '../errors';
import { pollerStamp } from './worker-versions';

export { validateScheduleActivity, validateCancelActivity } from './activity-options';

/**
 * Records ActivityTaskScheduled and arms the attempt. An eager activity is not
 * queued for pollers: the workflow task's completion hands it to the worker
 * that asked for it (dispatchActivity). Returns the scheduled event id.
 */
export function scheduleActivity(eng: Engine, e: Execution, a: any, completedEventId: number, eager = false): number {
  const t = deduceTimeouts(e, a);
  const retryPolicy = normalizeRetryPolicy(a.retryPolicy ?? {}, 'RetryPolicy');
  const taskQueue = a.taskQueue?.name || e.taskQueue;
  const id = eng.appendEvent(
    e,
    eng.event(EventType.ACTIVITY_TASK_SCHEDULED, 'activityTaskScheduledEventAttributes', {
      activityId: a.activityId,
      activityType: a.activityType,
      taskQueue: { name: taskQueue, kind: 1 },
      header: a.header,
      input: a.input,
      scheduleToCloseTimeout: durFromMs(t.s2c),
      scheduleToStartTimeout: durFromMs(t.s2s),
      startToCloseTimeout: durFromMs(t.st2c),
      heartbeatTimeout: durFromMs(t.hb),
      workflowTaskCompletedEventId: completedEventId,
      retryPolicy: retryPolicyToWire(retryPolicy),
      useWorkflowBuildId: a.useWorkflowBuildId,
      priority: a.priority,
    }),
  );
  const now = eng.now();
  const info: ActivityInfo = {
    scheduledEventId: id,
    activityId: a.activityId,
    activityType: a.activityType.name,
    taskQueue,
    attempt: 1,
    scheduledTime: now,
    currentAttemptScheduledTime: now,
    scheduleToCloseMs: t.s2c,
    scheduleToStartMs: t.s2s,
    startToCloseMs: t.st2c,
    heartbeatMs: t.hb,
    retryPolicy,
    cancelRequested: false,
  };
  e.activities[id] = info;
  armActivity(eng, e, info, !eager);
  return id;
}

function tname(info: ActivityInfo, what: string): string {
  return `act:${info.scheduledEventId}:${what}`;
}

/** Queues the current attempt (or its retry) and arms its timers; also used by recovery. */
export function armActivity(eng: Engine, e: Execution, info: ActivityInfo, queue = true): void {
  if (info.scheduleToCloseMs > 0) {
    eng.setTimer(e, tname(info, 's2c'), info.scheduledTime + info.scheduleToCloseMs, (run) =>
      timeoutActivity(eng, run, info.scheduledEventId, info.attempt, TimeoutType.SCHEDULE_TO_CLOSE),
    );
  }
  if (info.retryAt !== undefined) {
    eng.setTimer(e, tname(info, 'retry'), info.retryAt, (run) => {
      const cur = run.activities[info.scheduledEventId];
      if (!cur || cur.retryAt === undefined) return;
      cur.retryAt = undefined;
      cur.currentAttemptScheduledTime = eng.now();
      eng.markDirty(run);
      armActivity(eng, run, cur);
    });
    return;
  }
  eng.hold(e, tname(info, 'lock'));
  const attempt = info.attempt; // timers of an attempt must not time out a later one
  if (info.startedTime === undefined) {
    if (info.scheduleToStartMs > 0) {
      eng.setTimer(e, tname(info, 's2s'), info.currentAttemptScheduledTime + info.scheduleToStartMs, (run) =>
        timeoutActivity(eng, run, info.scheduledEventId, attempt, TimeoutType.SCHEDULE_TO_START),
      );
    }
    const task = { t: 'act' as const, key: eng.key(e), scheduledEventId: info.scheduledEventId, attempt: info.attempt };
    if (queue) queueMicrotask(() => eng.matching.add(e.namespace, 'activity', info.taskQueue, task));
  } else {
    armStartedTimers(eng, e, info);
  }
}

function armStartedTimers(eng: Engine, e: Execution, info: ActivityInfo): void {
  const attempt = info.attempt;
  if (info.startToCloseMs > 0) {
    eng.setTimer(e, tname(info, 'st2c'), info.startedTime! + info.startToCloseMs, (run) =>
      timeoutActivity(eng, run, info.scheduledEventId, attempt, TimeoutType.START_TO_CLOSE),
    );
  }
  armHeartbeat(eng, e, info);
}

function armHeartbeat(eng: Engine, e: Execution, info: ActivityInfo): void {
  const attempt = info.attempt;
  if (info.heartbeatMs > 0) {
    const from = info.lastHeartbeatTime ?? info.startedTime!;
    eng.setTimer(e, tname(info, 'hb'), from + info.heartbeatMs, (run) =>
      timeoutActivity(eng, run, info.scheduledEventId, attempt, TimeoutType.HEARTBEAT),
    );
  }
}

function clearAttempt(eng: Engine, e: Execution, info: ActivityInfo): void {
  for (const w of ['s2s', 'st2c', 'hb', 'retry']) eng.clearTimer(e, tname(info, w));
  eng.release(e, tname(info, 'lock'));
}

function clearAll(eng: Engine, e: Execution, info: ActivityInfo): void {
  clearAttempt(eng, e, info);
  eng.clearTimer(e, tname(info, 's2c'));
  delete e.activities[info.scheduledEventId];
}

export function dispatchActivity(
  eng: Engine,
  key: string,
  scheduledEventId: number,
  attempt: number,
  identity: string,
): PollResponse | undefined {
  const e = eng.byKey(key);
  if (!e || !eng.isOpen(e)) return undefined;
  const info = e.activities[scheduledEventId];
  if (!info || info.attempt !== attempt || info.startedTime !== undefined || info.retryAt !== undefined)
    return undefined;
  const now = eng.now();
  eng.clearTimer(e, tname(info, 's2s'));
  info.startedTime = now;
  info.startedIdentity = identity;
  info.startedWorkerVersion = pollerStamp(eng, identity);
  info.startedRequestId = eng.newId();
  info.lastHeartbeatTime = undefined;
  eng.markDirty(e);
  armStartedTimers(eng, e, info);
  const sched = e.history[scheduledEventId - 1]?.activityTaskScheduledEventAttributes ?? {};
  return {
    taskToken: encodeToken({ n: e.namespace, w: e.workflowId, r: e.runId, k: 'a', s: scheduledEventId, a: attempt }),
    workflowNamespace: e.namespace,
    workflowType: { name: e.workflowType },
    workflowExecution: { workflowId: e.workflowId, runId: e.runId },
    activityType: { name: info.activityType },
    activityId: info.activityId,
    header: sched.header,
    input: sched.input,
    heartbeatDetails: info.heartbeatDetails,
    scheduledTime: tsFromMs(info.scheduledTime),
    currentAttemptScheduledTime: tsFromMs(info.currentAttemptScheduledTime),
    startedTime: tsFromMs(now),
    attempt,
    scheduleToCloseTimeout: durFromMs(info.scheduleToCloseMs),
    startToCloseTimeout: durFromMs(info.startToCloseMs),
    heartbeatTimeout: durFromMs(info.heartbeatMs),
    retryPolicy: retryPolicyToWire(info.retryPolicy),
    priority: sched.priority,
  };
}

/**
 * Writes the lazily-recorded started event (or, for a by-id completion of an
 * attempt no worker picked up, a fabricated one), then the outcome, then wakes
 * the workflow.
 */
function recordOutcome(
  eng: Engine,
  e: Execution,
  info: ActivityInfo,
  type: number,
  attr: string,
  attrs: object,
  fabricateStartedBy?: string,
): void {
  const wasStarted = info.startedTime !== undefined;
  const started = eng.event(EventType.ACTIVITY_TASK_STARTED, 'activityTaskStartedEventAttributes', {
    scheduledEventId: info.scheduledEventId,
    identity: wasStarted ? info.startedIdentity : fabricateStartedBy,
    requestId: wasStarted ? info.startedRequestId : '',
    attempt: info.attempt,
    lastFailure: info.lastFailure,
    workerVersion: wasStarted ? info.startedWorkerVersion : undefined,
  });
  // Written now, with the outcome, but stamped when a worker took the attempt (the real server's
  // record too): the history times the activity's wait in the queue apart from its run.
  if (wasStarted) started.eventTime = tsFromMs(info.startedTime!);
  const withStarted = wasStarted || fabricateStartedBy !== undefined;
  const outcome = eng.event(type, attr, { scheduledEventId: info.scheduledEventId, ...attrs });
  clearAll(eng, e, info);
  if (e.wft?.startedEventId !== undefined) {
    // Buffered events get their ids when flushed; the outcome then links to the started event.
    if (withStarted) {
      e.buffered.push(started);
      (outcome as any).__startedFromPrev = attr;
    }
    e.buffered.push(outcome);
    eng.markDirty(e);
  } else {
    if (withStarted) (outcome as any)[attr].startedEventId = eng.appendEvent(e, started);
    eng.appendEvent(e, outcome);
  }
  scheduleWorkflowTask(eng, e);
}

export function completeActivity(
  eng: Engine,
  e: Execution,
  info: ActivityInfo,
  result: Payloads | undefined,
  identity?: string,
): void {
  recordOutcome(
    eng,
    e,
    info,
    EventType.ACTIVITY_TASK_COMPLETED,
    'activityTaskCompletedEventAttributes',
    { result, identity },
    identity ?? '',
  );
}

function expirationOf(info: ActivityInfo): number {
  return info.scheduleToCloseMs > 0 ? info.scheduledTime + info.scheduleToCloseMs : 0;
}

/** The real server's RetryActivity: whether this attempt's failure leads to another attempt. */
function retryDecision(eng: Engine, info: ActivityInfo, failure: Failure) {
  if (!info.retryPolicy) return { retry: false as const, state: RetryState.RETRY_POLICY_NOT_SET };
  // A cancelled activity must end, however it ends.
  if (info.cancelRequested) return { retry: false as const, state: RetryState.CANCEL_REQUESTED };
  return decideRetry(info.retryPolicy, info.attempt, failure, eng.now(), expirationOf(info));
}

export function failActivity(
  eng: Engine,
  e: Execution,
  info: ActivityInfo,
  failure: Failure,
  details: Payloads | undefined,
  identity?: string,
): void {
  if (details) info.heartbeatDetails = details;
  const d = retryDecision(eng, info, failure);
  if (d.retry) return retryLater(eng, e, info, failure, d.delayMs);
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_FAILED, 'activityTaskFailedEventAttributes', {
    failure,
    identity,
    retryState: d.state,
  });
}

function retryLater(eng: Engine, e: Execution, info: ActivityInfo, failure: Failure, delayMs: number): void {
  clearAttempt(eng, e, info);
  info.lastFailure = failure;
  info.attempt++;
  info.startedTime = undefined;
  info.startedIdentity = undefined;
  info.startedRequestId = undefined;
  info.lastHeartbeatTime = undefined;
  info.retryAt = eng.now() + delayMs;
  eng.markDirty(e);
  armActivity(eng, e, info);
}

export function canceledActivity(
  eng: Engine,
  e: Execution,
  info: ActivityInfo,
  details: Payloads | undefined,
  identity?: string,
): void {
  if (!info.cancelRequested)
    throw invalidArgument('unable to mark activity as canceled without activity being request canceled first');
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_CANCELED, 'activityTaskCanceledEventAttributes', {
    details,
    identity,
    latestCancelRequestedEventId: findCancelRequested(e, info.scheduledEventId),
  });
}

function findCancelRequested(e: Execution, scheduledEventId: number): number {
  for (let i = e.history.length - 1; i >= 0; i--) {
    const ev = e.history[i];
    if (
      ev.eventType === EventType.ACTIVITY_TASK_CANCEL_REQUESTED &&
      ev.activityTaskCancelRequestedEventAttributes?.scheduledEventId === scheduledEventId
    )
      return ev.eventId;
  }
  return 0;
}

export function heartbeatActivity(
  eng: Engine,
  e: Execution,
  info: ActivityInfo,
  details: Payloads | undefined,
): { cancelRequested: boolean } {
  info.lastHeartbeatTime = eng.now();
  // Each heartbeat replaces the details, even with none (the real server's UpdateActivityProgress).
  info.heartbeatDetails = details;
  eng.markDirty(e);
  armHeartbeat(eng, e, info);
  return { cancelRequested: info.cancelRequested };
}

const RETRY_S2C_TIMEOUT =
  'Not enough time to schedule next retry before activity ScheduleToClose timeout, giving up retrying';

function timeoutActivity(
  eng: Engine,
  e: Execution,
  scheduledEventId: number,
  attempt: number,
  timeoutType: number,
): void {
  const info = e.activities[scheduledEventId];
  if (!info || !eng.isOpen(e)) return;
  if (timeoutType !== TimeoutType.SCHEDULE_TO_CLOSE && info.attempt !== attempt) return;
  let failure: Failure = {
    message: `activity ${timeoutTypeName(timeoutType)} timeout`,
    source: 'Server',
    timeoutFailureInfo: { timeoutType },
  };
  let state: number;
  if (timeoutType === TimeoutType.SCHEDULE_TO_START || timeoutType === TimeoutType.SCHEDULE_TO_CLOSE) {
    // Server-enforced deadlines: never retried, reported as a timeout of the retries.
    state = info.retryPolicy
      ? info.cancelRequested
        ? RetryState.CANCEL_REQUESTED
        : RetryState.TIMEOUT
      : RetryState.RETRY_POLICY_NOT_SET;
  } else {
    const d = retryDecision(eng, info, failure);
    if (d.retry) return retryLater(eng, e, info, failure, d.delayMs);
    state = d.state;
  }
  // Out of time for another attempt (schedule-to-close reached, or a retry would start
  // after it): the real server reports that as the schedule-to-close deadline.
  if (state === RetryState.TIMEOUT && timeoutType !== TimeoutType.SCHEDULE_TO_START) {
    failure = {
      message: RETRY_S2C_TIMEOUT,
      source: 'Server',
      timeoutFailureInfo: { timeoutType: TimeoutType.SCHEDULE_TO_CLOSE },
    };
  }
  failure.timeoutFailureInfo.lastHeartbeatDetails = info.heartbeatDetails;
  // The failure of the previous attempt is what actually went wrong; the timeout only ended the retries.
  failure.cause = info.lastFailure;
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_TIMED_OUT, 'activityTaskTimedOutEventAttributes', {
    failure,
    retryState: state,
  });
}

/** Runs that cancelled a not-yet-started activity in the task being completed: they need a new workflow task. */
const wakeAfterCommands = new WeakSet<Execution>();

/** True (once) when applying commands resolved an activity the workflow must hear about. */
export function activityNeedsWorkflowTask(e: Execution): boolean {
  const has = wakeAfterCommands.has(e);
  wakeAfterCommands.delete(e);
  return has;
}

const NOT_STARTED_DETAILS = {
  payloads: [
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify('ACTIVITY_ID_NOT_STARTED')) },
  ],
};

/**
 * Records a cancel request. For an activity nobody is running (queued or waiting
 * to retry) it also returns the write of its canceled outcome, which the caller
 * runs after the completion's other commands: the real server buffers that event
 * and flushes it after the command events (before a close event, if any).
 */
export function requestCancelActivity(
  eng: Engine,
  e: Execution,
  a: any,
  completedEventId: number,
  identity?: string,
): (() => void) | undefined {
  const info = e.activities[a.scheduledEventId];
  if (!info) {
    // Already finished (outcome buffered): the request is recorded, the outcome stands.
    eng.appendEvent(
      e,
      eng.event(EventType.ACTIVITY_TASK_CANCEL_REQUESTED, 'activityTaskCancelRequestedEventAttributes', {
        scheduledEventId: a.scheduledEventId,
        workflowTaskCompletedEventId: completedEventId,
      }),
    );
    return undefined;
  }
  const requestedId = eng.appendEvent(
    e,
    eng.event(EventType.ACTIVITY_TASK_CANCEL_REQUESTED, 'activityTaskCancelRequestedEventAttributes', {
      scheduledEventId: info.scheduledEventId,
      workflowTaskCompletedEventId: completedEventId,
    }),
  );
  info.cancelRequested = true;
  eng.markDirty(e);
  if (info.startedTime !== undefined) return undefined; // the worker learns it from its next heartbeat
  // Queued or waiting to retry: nobody to tell, so it is canceled at once. The
  // workflow task that follows is scheduled after all commands are applied.
  clearAll(eng, e, info);
  return () => {
    eng.appendEvent(
      e,
      eng.event(EventType.ACTIVITY_TASK_CANCELED, 'activityTaskCanceledEventAttributes', {
        scheduledEventId: info.scheduledEventId,
        latestCancelRequestedEventId: requestedId,
        details: NOT_STARTED_DETAILS,
        identity,
      }),
    );
    wakeAfterCommands.add(e);
  };
}
