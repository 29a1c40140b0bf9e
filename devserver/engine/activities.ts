// Activity tasks: scheduling with the server's timeout deduction, dispatch,
// completion/failure/cancellation, heartbeats, all four timeouts, and
// server-side retries per RetryPolicy.
import type { Engine, PollResponse } from './engine';
import type { ActivityInfo, Execution, Failure, Payloads } from './state';
import { EventType, RetryState, TimeoutType, WftFailedCause, durFromMs, msFromDur, tsFromMs } from '../proto';
import { BadCommand } from './commands';
import { decideRetry, normalizeRetryPolicy, retryPolicyToWire } from './retry';
import { scheduleWorkflowTask } from './workflow-tasks';
import { encodeToken, decodeToken, TaskToken } from './task-token';
import { notFound, workflowCompleted, invalidArgument } from '../errors';

const BAD = WftFailedCause.BAD_SCHEDULE_ACTIVITY_ATTRIBUTES;

export function validateScheduleActivity(e: Execution, a: any, seenIds: Set<string>): void {
  if (!a.activityId) throw new BadCommand(BAD, 'ActivityId is not set on command.');
  if (!a.activityType?.name) throw new BadCommand(BAD, 'ActivityType is not set on command.');
  if (!a.taskQueue?.name && !e.taskQueue) throw new BadCommand(BAD, 'TaskQueue is not set on command.');
  const open = Object.values(e.activities).some((x) => x.activityId === a.activityId);
  if (open || seenIds.has(a.activityId)) {
    throw new BadCommand(WftFailedCause.SCHEDULE_ACTIVITY_DUPLICATE_ID, `Activity ID ${a.activityId} is already used by an open activity.`);
  }
  seenIds.add(a.activityId);
  if (!(msFromDur(a.scheduleToCloseTimeout) > 0) && !(msFromDur(a.startToCloseTimeout) > 0)) {
    throw new BadCommand(BAD, 'A valid StartToClose or ScheduleToCloseTimeout is not set on command.');
  }
  try {
    if (a.retryPolicy) normalizeRetryPolicy(a.retryPolicy, 'RetryPolicy');
  } catch (err) {
    throw new BadCommand(BAD, (err as Error).message);
  }
}

/** The real server's deduction of missing timeouts, bounded by the run timeout. */
function deduceTimeouts(e: Execution, a: any) {
  let s2c = msFromDur(a.scheduleToCloseTimeout);
  let s2s = msFromDur(a.scheduleToStartTimeout);
  let st2c = msFromDur(a.startToCloseTimeout);
  let hb = msFromDur(a.heartbeatTimeout);
  const run = e.runTimeoutMs;
  if (s2c > 0) {
    s2s = s2s > 0 ? Math.min(s2s, s2c) : s2c;
    st2c = st2c > 0 ? Math.min(st2c, s2c) : s2c;
  } else {
    s2c = run;
    if (!(s2s > 0)) s2s = run;
  }
  if (run > 0) {
    s2c = s2c > 0 ? Math.min(s2c, run) : run;
    s2s = s2s > 0 ? Math.min(s2s, run) : run;
    st2c = Math.min(st2c, run);
  }
  hb = Math.min(hb, st2c);
  return { s2c, s2s, st2c, hb };
}

export function scheduleActivity(eng: Engine, e: Execution, a: any, completedEventId: number): void {
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
  armActivity(eng, e, info);
}

function tname(info: ActivityInfo, what: string): string {
  return `act:${info.scheduledEventId}:${what}`;
}

/** Queues the current attempt (or its retry) and arms its timers; also used by recovery. */
export function armActivity(eng: Engine, e: Execution, info: ActivityInfo): void {
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
  if (info.startedTime === undefined) {
    if (info.scheduleToStartMs > 0) {
      eng.setTimer(e, tname(info, 's2s'), info.currentAttemptScheduledTime + info.scheduleToStartMs, (run) =>
        timeoutActivity(eng, run, info.scheduledEventId, info.attempt, TimeoutType.SCHEDULE_TO_START),
      );
    }
    const task = { t: 'act' as const, key: eng.key(e), scheduledEventId: info.scheduledEventId, attempt: info.attempt };
    queueMicrotask(() => eng.matching.add(e.namespace, 'activity', info.taskQueue, task));
  } else {
    armStartedTimers(eng, e, info);
  }
}

function armStartedTimers(eng: Engine, e: Execution, info: ActivityInfo): void {
  if (info.startToCloseMs > 0) {
    eng.setTimer(e, tname(info, 'st2c'), info.startedTime! + info.startToCloseMs, (run) =>
      timeoutActivity(eng, run, info.scheduledEventId, info.attempt, TimeoutType.START_TO_CLOSE),
    );
  }
  armHeartbeat(eng, e, info);
}

function armHeartbeat(eng: Engine, e: Execution, info: ActivityInfo): void {
  if (info.heartbeatMs > 0) {
    const from = info.lastHeartbeatTime ?? info.startedTime!;
    eng.setTimer(e, tname(info, 'hb'), from + info.heartbeatMs, (run) =>
      timeoutActivity(eng, run, info.scheduledEventId, info.attempt, TimeoutType.HEARTBEAT),
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

export function dispatchActivity(eng: Engine, key: string, scheduledEventId: number, attempt: number, identity: string): PollResponse | undefined {
  const e = eng.byKey(key);
  if (!e || !eng.isOpen(e)) return undefined;
  const info = e.activities[scheduledEventId];
  if (!info || info.attempt !== attempt || info.startedTime !== undefined || info.retryAt !== undefined) return undefined;
  const now = eng.now();
  eng.clearTimer(e, tname(info, 's2s'));
  info.startedTime = now;
  info.startedIdentity = identity;
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

/** Writes the lazily-recorded started event, then the outcome, then wakes the workflow. */
function recordOutcome(eng: Engine, e: Execution, info: ActivityInfo, type: number, attr: string, attrs: object): void {
  const started = eng.event(EventType.ACTIVITY_TASK_STARTED, 'activityTaskStartedEventAttributes', {
    scheduledEventId: info.scheduledEventId,
    identity: info.startedIdentity,
    requestId: info.startedRequestId,
    attempt: info.attempt,
    lastFailure: info.lastFailure,
  });
  const outcome = eng.event(type, attr, { scheduledEventId: info.scheduledEventId, ...attrs });
  const wasStarted = info.startedTime !== undefined;
  clearAll(eng, e, info);
  if (e.wft?.startedEventId !== undefined) {
    // Buffered events get their ids when flushed; the outcome then links to the started event.
    if (wasStarted) {
      e.buffered.push(started);
      (outcome as any).__startedFromPrev = attr;
    }
    e.buffered.push(outcome);
    eng.markDirty(e);
  } else {
    if (wasStarted) (outcome as any)[attr].startedEventId = eng.appendEvent(e, started);
    eng.appendEvent(e, outcome);
  }
  scheduleWorkflowTask(eng, e);
}

function resolveTask(eng: Engine, token: TaskToken): { e: Execution; info: ActivityInfo } {
  const e = eng.executions.get(eng.key({ namespace: token.n, workflowId: token.w, runId: token.r } as Execution));
  if (!e) throw notFound('workflow execution not found');
  if (!eng.isOpen(e)) throw workflowCompleted();
  const info = e.activities[token.s ?? -1];
  if (!info || info.attempt !== token.a || info.startedTime === undefined) throw notFound('Activity task not found.');
  return { e, info };
}

export function activityByToken(eng: Engine, tokenBytes: Uint8Array | undefined) {
  return resolveTask(eng, decodeToken(tokenBytes, 'a'));
}

export function activityById(eng: Engine, req: any): { e: Execution; info: ActivityInfo } {
  if (!req.workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (!req.activityId) throw invalidArgument('ActivityId is not set on request.');
  const e = eng.getRun(req.namespace, req.workflowId, req.runId || undefined);
  if (!eng.isOpen(e)) throw workflowCompleted();
  const info = Object.values(e.activities).find((x) => x.activityId === req.activityId);
  if (!info || info.startedTime === undefined) throw notFound('Activity task not found.');
  return { e, info };
}

export function completeActivity(eng: Engine, e: Execution, info: ActivityInfo, result: Payloads | undefined, identity?: string): void {
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_COMPLETED, 'activityTaskCompletedEventAttributes', { result, identity });
}

export function failActivity(eng: Engine, e: Execution, info: ActivityInfo, failure: Failure, details: Payloads | undefined, identity?: string): void {
  if (details) info.heartbeatDetails = details;
  const d = decideRetry(info.retryPolicy, info.attempt, failure, eng.now(), info.scheduleToCloseMs > 0 ? info.scheduledTime + info.scheduleToCloseMs : 0);
  if (d.retry) return retryLater(eng, e, info, failure, d.delayMs);
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_FAILED, 'activityTaskFailedEventAttributes', { failure, identity, retryState: d.state });
}

function retryLater(eng: Engine, e: Execution, info: ActivityInfo, failure: Failure, delayMs: number): void {
  clearAttempt(eng, e, info);
  info.lastFailure = failure;
  info.attempt++;
  info.startedTime = undefined;
  info.startedIdentity = undefined;
  info.retryAt = eng.now() + delayMs;
  eng.markDirty(e);
  armActivity(eng, e, info);
}

export function canceledActivity(eng: Engine, e: Execution, info: ActivityInfo, details: Payloads | undefined, identity?: string): void {
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_CANCELED, 'activityTaskCanceledEventAttributes', {
    details,
    identity,
    latestCancelRequestedEventId: info.cancelRequested ? findCancelRequested(e, info.scheduledEventId) : 0,
  });
}

function findCancelRequested(e: Execution, scheduledEventId: number): number {
  for (let i = e.history.length - 1; i >= 0; i--) {
    const ev = e.history[i];
    if (ev.eventType === EventType.ACTIVITY_TASK_CANCEL_REQUESTED && ev.activityTaskCancelRequestedEventAttributes?.scheduledEventId === scheduledEventId) return ev.eventId;
  }
  return 0;
}

export function heartbeatActivity(eng: Engine, e: Execution, info: ActivityInfo, details: Payloads | undefined): { cancelRequested: boolean } {
  info.lastHeartbeatTime = eng.now();
  if (details) info.heartbeatDetails = details;
  eng.markDirty(e);
  armHeartbeat(eng, e, info);
  return { cancelRequested: info.cancelRequested };
}

function timeoutActivity(eng: Engine, e: Execution, scheduledEventId: number, attempt: number, timeoutType: number): void {
  const info = e.activities[scheduledEventId];
  if (!info || !eng.isOpen(e)) return;
  if (timeoutType !== TimeoutType.SCHEDULE_TO_CLOSE && info.attempt !== attempt) return;
  const names: Record<number, string> = { 1: 'StartToClose', 2: 'ScheduleToStart', 3: 'ScheduleToClose', 4: 'Heartbeat' };
  const failure: Failure = {
    message: `activity ${names[timeoutType]} timeout`,
    source: 'Server',
    timeoutFailureInfo: { timeoutType, lastHeartbeatDetails: info.heartbeatDetails },
  };
  if (timeoutType === TimeoutType.START_TO_CLOSE || timeoutType === TimeoutType.HEARTBEAT) {
    const d = decideRetry(info.retryPolicy, info.attempt, failure, eng.now(), info.scheduleToCloseMs > 0 ? info.scheduledTime + info.scheduleToCloseMs : 0);
    if (d.retry) return retryLater(eng, e, info, failure, d.delayMs);
    return recordTimeout(eng, e, info, failure, d.state);
  }
  recordTimeout(eng, e, info, failure, RetryState.TIMEOUT);
}

function recordTimeout(eng: Engine, e: Execution, info: ActivityInfo, failure: Failure, retryState: number): void {
  if (info.lastFailure && !failure.cause) failure.cause = info.lastFailure;
  recordOutcome(eng, e, info, EventType.ACTIVITY_TASK_TIMED_OUT, 'activityTaskTimedOutEventAttributes', { failure, retryState });
}

export function requestCancelActivity(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const info = e.activities[a.scheduledEventId];
  if (!info) return;
  eng.appendEvent(
    e,
    eng.event(EventType.ACTIVITY_TASK_CANCEL_REQUESTED, 'activityTaskCancelRequestedEventAttributes', {
      scheduledEventId: info.scheduledEventId,
      workflowTaskCompletedEventId: completedEventId,
    }),
  );
  info.cancelRequested = true;
  eng.markDirty(e);
  // Not running now (queued or waiting to retry): nothing to tell, cancel at once.
  if (info.startedTime === undefined) canceledActivity(eng, e, info, undefined);
}

export function validateCancelActivity(e: Execution, a: any): void {
  if (!e.activities[a.scheduledEventId]) {
    throw new BadCommand(WftFailedCause.BAD_REQUEST_CANCEL_ACTIVITY_ATTRIBUTES, `invalid history builder state for action: request-cancel-activity (scheduledEventId ${a.scheduledEventId})`);
  }
}
