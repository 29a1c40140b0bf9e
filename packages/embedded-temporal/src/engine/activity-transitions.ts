// What happens to a standalone activity: its attempts are queued for pollers,
// started, heartbeated, completed, failed (and retried per its retry policy),
// timed out by any of its four timeouts, cancelled and terminated, with the
// outcomes the real server reports (PollActivityExecution's outcome).
import type { Failure, Payloads } from './state';
import { RetryState, TimeoutType } from '../proto';
import { failedPrecondition, invalidArgument } from '../errors';
import { decideRetry, timeoutTypeName } from './retry';
import type { ActivityExecutions } from './activity-executions';
import { ActivityOutcome, ActivityRun, ActivityStatus, STATUS_NAME, activityTask, isRunning } from './activity-run';

const ATTEMPT_TIMERS = ['s2s', 'st2c', 'hb', 'retry'];
const RETRY_S2C_TIMEOUT =
  'Not enough time to schedule next retry before activity ScheduleToClose timeout, giving up retrying';

/** Arms whatever the run waits for: its start delay or retry backoff, its queued attempt, or its running one. */
export function armActivityRun(reg: ActivityExecutions, a: ActivityRun): void {
  if (!isRunning(a)) return;
  if (a.scheduleToCloseMs > 0)
    reg.setTimer(a, 's2c', a.scheduleTime + a.scheduleToCloseMs, (run) =>
      timeout(reg, run, run.attempt, TimeoutType.SCHEDULE_TO_CLOSE),
    );
  if (a.retryAt !== undefined) {
    // Nothing is due until then, so virtual time may skip to it.
    reg.unlock(a);
    reg.setTimer(a, 'retry', a.retryAt, (run) => {
      run.retryAt = undefined;
      run.attemptScheduledTime = reg.eng.now();
      // The real server counts the retry, not the moment it becomes due.
      reg.persist(run, false);
      armActivityRun(reg, run);
    });
    return;
  }
  reg.lock(a);
  if (a.startedTime !== undefined) return armStarted(reg, a);
  const attempt = a.attempt;
  if (a.scheduleToStartMs > 0)
    reg.setTimer(a, 's2s', a.attemptScheduledTime + a.scheduleToStartMs, (run) =>
      timeout(reg, run, attempt, TimeoutType.SCHEDULE_TO_START),
    );
  const task = { t: 'sact' as const, key: reg.key(a), attempt };
  // Deferred, as for workflow activities: the call that queued it answers first.
  queueMicrotask(() => reg.eng.matching.add(a.namespace, 'activity', a.taskQueue, task));
}

function armStarted(reg: ActivityExecutions, a: ActivityRun): void {
  const attempt = a.attempt;
  if (a.startToCloseMs > 0)
    reg.setTimer(a, 'st2c', a.startedTime! + a.startToCloseMs, (run) =>
      timeout(reg, run, attempt, TimeoutType.START_TO_CLOSE),
    );
  armHeartbeat(reg, a);
}

function armHeartbeat(reg: ActivityExecutions, a: ActivityRun): void {
  const attempt = a.attempt;
  if (a.heartbeatMs > 0)
    reg.setTimer(a, 'hb', (a.lastHeartbeatTime ?? a.startedTime!) + a.heartbeatMs, (run) =>
      timeout(reg, run, attempt, TimeoutType.HEARTBEAT),
    );
}

/** Hands the queued attempt to a poller; undefined when the task went stale meanwhile. */
export function dispatchActivityRun(
  reg: ActivityExecutions,
  key: string,
  attempt: number,
  identity: string,
): object | undefined {
  const a = reg.runs.get(key);
  if (!a || !isRunning(a) || a.attempt !== attempt || a.startedTime !== undefined || a.retryAt !== undefined)
    return undefined;
  const now = reg.eng.now();
  reg.clearTimers(a, ['s2s']);
  a.startedTime = now;
  a.lastStartedTime = now;
  a.lastWorkerIdentity = identity;
  reg.persist(a);
  armStarted(reg, a);
  return activityTask(a);
}

function close(reg: ActivityExecutions, a: ActivityRun, status: number, outcome: ActivityOutcome): void {
  a.status = status;
  a.closeTime = reg.eng.now();
  a.outcome = outcome;
  a.startedTime = undefined;
  a.currentRetryIntervalMs = undefined;
  reg.clearTimers(a);
  reg.unlock(a);
  reg.persist(a);
  reg.notify(a);
}

function endAttempt(reg: ActivityExecutions, a: ActivityRun): void {
  a.lastAttemptCompleteTime = reg.eng.now();
  reg.clearTimers(a, ATTEMPT_TIMERS);
}

export function completeActivityRun(reg: ActivityExecutions, a: ActivityRun, result: Payloads | undefined): void {
  endAttempt(reg, a);
  close(reg, a, ActivityStatus.COMPLETED, { result });
}

function expiration(a: ActivityRun): number {
  return a.scheduleToCloseMs > 0 ? a.scheduleTime + a.scheduleToCloseMs : 0;
}

function retryDecision(reg: ActivityExecutions, a: ActivityRun, failure: Failure) {
  // A cancelled activity must end, however it ends.
  if (a.cancelRequest) return { retry: false as const, state: RetryState.CANCEL_REQUESTED };
  return decideRetry(a.retryPolicy, a.attempt, failure, reg.eng.now(), expiration(a));
}

export function failActivityRun(
  reg: ActivityExecutions,
  a: ActivityRun,
  failure: Failure,
  details: Payloads | undefined,
): void {
  if (details) a.heartbeatDetails = details;
  endAttempt(reg, a);
  const d = retryDecision(reg, a, failure);
  if (d.retry) return retryLater(reg, a, failure, d.delayMs);
  a.lastFailure = failure;
  close(reg, a, ActivityStatus.FAILED, { failure, retryState: d.state });
}

function retryLater(reg: ActivityExecutions, a: ActivityRun, failure: Failure, delayMs: number): void {
  a.lastFailure = failure;
  a.attempt++;
  a.startedTime = undefined;
  a.lastHeartbeatTime = undefined;
  a.currentRetryIntervalMs = delayMs;
  a.retryAt = reg.eng.now() + delayMs;
  reg.persist(a);
  armActivityRun(reg, a);
}

/** A heartbeat: new details (even none), the heartbeat timeout restarted; tells the worker of a cancel request. */
export function heartbeatActivityRun(
  reg: ActivityExecutions,
  a: ActivityRun,
  details: Payloads | undefined,
): { cancelRequested: boolean } {
  a.lastHeartbeatTime = reg.eng.now();
  a.heartbeatDetails = details;
  a.heartbeatCount++;
  reg.persist(a);
  armHeartbeat(reg, a);
  return { cancelRequested: !!a.cancelRequest };
}

function canceledOutcome(a: ActivityRun, details: Payloads | undefined): ActivityOutcome {
  return {
    failure: { message: 'Activity canceled', canceledFailureInfo: { details, identity: a.cancelRequest?.identity } },
  };
}

/** The worker reports the cancellation it was asked for. */
export function canceledActivityRun(reg: ActivityExecutions, a: ActivityRun, details: Payloads | undefined): void {
  if (!a.cancelRequest)
    throw invalidArgument('unable to mark activity as canceled without activity being request canceled first');
  endAttempt(reg, a);
  close(reg, a, ActivityStatus.CANCELED, canceledOutcome(a, details));
}

function jsonPayloads(s: string): Payloads {
  return { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(s)) }] };
}

/**
 * RequestCancelActivityExecution: an attempt on a worker learns of it from its
 * next heartbeat; one nobody runs (queued, delayed or backing off) is canceled
 * at once, its reason as the cancellation's details. A repeated request (same
 * request id) is answered as the first was, also once the activity is closed.
 */
export function requestCancelActivityRun(
  reg: ActivityExecutions,
  a: ActivityRun,
  req: { identity?: string; reason?: string; requestId?: string },
): void {
  const prior = a.cancelRequest?.requestId;
  if (req.requestId && prior === req.requestId) return;
  if (!isRunning(a)) throw failedPrecondition(`activity is in terminal state ${STATUS_NAME[a.status]}`);
  if (a.cancelRequest) throw failedPrecondition(`cancellation already requested with request ID ${prior ?? ''}`);
  a.cancelRequest = {
    identity: req.identity || undefined,
    reason: req.reason || undefined,
    requestId: req.requestId || undefined,
  };
  if (a.startedTime !== undefined) return reg.persist(a);
  close(reg, a, ActivityStatus.CANCELED, canceledOutcome(a, jsonPayloads(req.reason ?? '')));
}

/** TerminateActivityExecution; a repeat with the same request id is a no-op. */
export function terminateActivityRun(
  reg: ActivityExecutions,
  a: ActivityRun,
  req: { identity?: string; reason?: string; requestId?: string },
): void {
  if (a.status === ActivityStatus.TERMINATED) {
    if (a.terminateRequestId === (req.requestId ?? '')) return;
    throw failedPrecondition(`already terminated with request ID ${a.terminateRequestId ?? ''}`);
  }
  if (!isRunning(a)) throw failedPrecondition(`invalid transition from ${STATUS_NAME[a.status]}`);
  a.terminateRequestId = req.requestId ?? '';
  close(reg, a, ActivityStatus.TERMINATED, {
    failure: { message: req.reason || undefined, terminatedFailureInfo: { identity: req.identity || undefined } },
  });
}

/** A timeout of the attempt `attempt` (schedule-to-close ends the whole run, whatever its attempt). */
function timeout(reg: ActivityExecutions, a: ActivityRun, attempt: number, timeoutType: number): void {
  if (!isRunning(a) || (timeoutType !== TimeoutType.SCHEDULE_TO_CLOSE && a.attempt !== attempt)) return;
  let failure: Failure = {
    message: `activity ${timeoutTypeName(timeoutType)} timeout`,
    timeoutFailureInfo: { timeoutType },
  };
  endAttempt(reg, a);
  let state: number;
  if (timeoutType === TimeoutType.SCHEDULE_TO_START || timeoutType === TimeoutType.SCHEDULE_TO_CLOSE) {
    // Server-enforced deadlines: never retried.
    state = a.cancelRequest ? RetryState.CANCEL_REQUESTED : RetryState.TIMEOUT;
  } else {
    const d = retryDecision(reg, a, failure);
    if (d.retry) return retryLater(reg, a, failure, d.delayMs);
    state = d.state;
  }
  if (
    state === RetryState.TIMEOUT &&
    timeoutType !== TimeoutType.SCHEDULE_TO_START &&
    timeoutType !== TimeoutType.SCHEDULE_TO_CLOSE
  ) {
    failure = { message: RETRY_S2C_TIMEOUT, timeoutFailureInfo: { timeoutType: TimeoutType.SCHEDULE_TO_CLOSE } };
  }
  if (a.heartbeatDetails) failure.timeoutFailureInfo.lastHeartbeatDetails = a.heartbeatDetails;
  if (a.lastFailure) failure.cause = a.lastFailure;
  close(reg, a, ActivityStatus.TIMED_OUT, { failure, retryState: state });
}
