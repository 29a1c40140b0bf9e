// Closing runs: completion, failure, timeout, cancellation, termination,
// continue-as-new, and the new runs that retry and cron create (a new run itself
// is create-run.ts's).
import type { Engine } from './engine';
import { Execution, Payloads, Failure } from './state';
import { ContinueAsNewInitiator, EventType, RetryState, TimeoutType, WfStatus, durFromMs, msFromDur } from '../proto';
import { isTransient } from './transient-task';
import { decideRetry, normalizeRetryPolicy } from './retry';
import { cronBackoffMs } from './cron-schedule';
import { typedSearchAttributes, withoutNilPayloads } from './search-attributes';
import { createRun, type RunParams } from './create-run';
import { HISTORY_SERVICE_IDENTITY } from './limits';

/**
 * Minimal spacing of runs in a chain (the server's workflowIdReuseMinimalInterval,
 * 1 s by default, also on the CLI dev server): a run that lived less than this
 * makes its successor wait out the rest, so continue-as-new loops cannot spin.
 */
const MIN_RUN_INTERVAL_MS = 1000;

function minChainBackoff(eng: Engine, e: Execution, backoffMs: number): number {
  const lifetime = eng.now() - e.executionTime;
  return lifetime + backoffMs < MIN_RUN_INTERVAL_MS ? MIN_RUN_INTERVAL_MS - lifetime : backoffMs;
}

/**
 * Parameters for the next run of a retry or cron chain: what the previous run was
 * started with (its start event), not what it upserted since.
 */
function nextRunParams(
  eng: Engine,
  e: Execution,
  over: Partial<RunParams> & { backoffMs: number; initiator: number },
): RunParams {
  const started = e.history[0]?.workflowExecutionStartedEventAttributes ?? {};
  const p: RunParams = {
    namespace: e.namespace,
    workflowId: e.workflowId,
    workflowType: e.workflowType,
    taskQueue: e.taskQueue,
    input: started.input,
    header: started.header,
    memo: started.memo?.fields,
    searchAttributes: started.searchAttributes?.indexedFields,
    runTimeoutMs: e.runTimeoutMs,
    executionTimeoutMs: e.executionTimeoutMs,
    taskTimeoutMs: e.workflowTaskTimeoutMs,
    retryPolicy: e.retryPolicy,
    cronSchedule: e.cronSchedule,
    requestId: eng.newId(),
    parent: e.parent,
    root: e.root,
    continuedExecutionRunId: e.runId,
    attempt: 1,
    firstRunId: e.firstRunId,
    executionExpirationTime: e.executionExpirationTime,
    priority: started.priority,
    links: e.history[0]?.links,
    ...over,
  };
  p.backoffMs = minChainBackoff(eng, e, over.backoffMs);
  return p;
}

/** The next cron run, or undefined when the run has no cron schedule (or it has no next time). */
function cronNextRun(
  eng: Engine,
  e: Execution,
  lastCompletionResult: Payloads | undefined,
  failure: Failure | undefined,
): Execution | undefined {
  const cron = e.cronSchedule;
  if (!cron) return undefined;
  // One instant for the backoff and the new run's start event: their sum is the cron time exactly, as on the real server.
  return eng.atOneInstant(() => {
    const backoffMs = cronBackoffMs(cron, e.executionTime, eng.now());
    if (backoffMs === undefined) return undefined;
    return createRun(
      eng,
      nextRunParams(eng, e, {
        backoffMs: Math.max(0, backoffMs),
        initiator: ContinueAsNewInitiator.CRON_SCHEDULE,
        lastCompletionResult,
        continuedFailure: failure,
      }),
    );
  });
}

function retryNextRun(
  eng: Engine,
  e: Execution,
  failure: Failure,
  lastCompletionResult: Payloads | undefined,
): { run?: Execution; state: number } {
  const d = decideRetry(e.retryPolicy, e.attempt, failure, eng.now(), e.executionExpirationTime);
  if (!d.retry) return { state: d.state };
  const started = e.history[0]?.workflowExecutionStartedEventAttributes ?? {};
  const run = createRun(
    eng,
    nextRunParams(eng, e, {
      backoffMs: d.delayMs,
      initiator: ContinueAsNewInitiator.RETRY,
      attempt: e.attempt + 1,
      continuedFailure: failure,
      lastCompletionResult,
      completionCallbacks: started.completionCallbacks,
    }),
  );
  return { run, state: RetryState.IN_PROGRESS };
}

function lastCompletionOf(e: Execution): Payloads | undefined {
  return e.history[0]?.workflowExecutionStartedEventAttributes?.lastCompletionResult;
}

export function completeRun(eng: Engine, e: Execution, result: Payloads | undefined, completedEventId: number): void {
  eng.releaseAll(e);
  const next = cronNextRun(eng, e, result, undefined);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_COMPLETED, 'workflowExecutionCompletedEventAttributes', {
      result,
      workflowTaskCompletedEventId: completedEventId,
      newExecutionRunId: next?.runId,
    }),
  );
  finish(eng, e, WfStatus.COMPLETED, next);
}

/** A failed run is retried under its retry policy; if not, a cron chain goes on regardless. */
export function failRun(eng: Engine, e: Execution, failure: Failure, completedEventId: number): void {
  eng.releaseAll(e);
  const retry = retryNextRun(eng, e, failure, undefined);
  const next = retry.run ?? cronNextRun(eng, e, lastCompletionOf(e), failure);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_FAILED, 'workflowExecutionFailedEventAttributes', {
      failure,
      retryState: retry.state,
      workflowTaskCompletedEventId: completedEventId,
      newExecutionRunId: next?.runId,
    }),
  );
  finish(eng, e, WfStatus.FAILED, next);
}

/** Run timeout (or the chain's execution timeout): retry or cron only while the chain has time left. */
export function timeoutRun(eng: Engine, e: Execution): void {
  if (!eng.isOpen(e)) return;
  eng.releaseAll(e);
  const failure = {
    message: 'workflow timeout',
    source: '',
    timeoutFailureInfo: { timeoutType: TimeoutType.START_TO_CLOSE },
  };
  let next: Execution | undefined;
  let state: number = RetryState.TIMEOUT;
  if (!e.executionExpirationTime || eng.now() < e.executionExpirationTime) {
    const r = retryNextRun(eng, e, failure, lastCompletionOf(e));
    next = r.run;
    state = r.state;
    if (!next) next = cronNextRun(eng, e, lastCompletionOf(e), failure);
  }
  failRunningTask(eng, e);
  eng.flushBuffered(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_TIMED_OUT, 'workflowExecutionTimedOutEventAttributes', {
      retryState: state,
      newExecutionRunId: next?.runId,
    }),
  );
  finish(eng, e, WfStatus.TIMED_OUT, next);
}

export function cancelRun(eng: Engine, e: Execution, details: Payloads | undefined, completedEventId: number): void {
  eng.releaseAll(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_CANCELED, 'workflowExecutionCanceledEventAttributes', {
      details,
      workflowTaskCompletedEventId: completedEventId,
    }),
  );
  finish(eng, e, WfStatus.CANCELED, undefined);
}

export function terminateRun(
  eng: Engine,
  e: Execution,
  reason: string | undefined,
  details: Payloads | undefined,
  identity?: string,
): void {
  eng.releaseAll(e);
  failRunningTask(eng, e);
  eng.flushBuffered(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_TERMINATED, 'workflowExecutionTerminatedEventAttributes', {
      reason,
      details,
      identity,
    }),
  );
  finish(eng, e, WfStatus.TERMINATED, undefined);
}

/**
 * Continue-as-new: the command says what the next run gets. The server fills in only
 * type, task queue and timeouts from this run; memo, search attributes, retry policy
 * and cron schedule come from the command alone (SDKs copy them when they want to).
 */
export function continueAsNew(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  eng.releaseAll(e);
  const initiator = a.initiator || ContinueAsNewInitiator.WORKFLOW;
  const started = e.history[0]?.workflowExecutionStartedEventAttributes ?? {};
  const runTimeoutMs = capRunTimeout(msFromDur(a.workflowRunTimeout) || e.runTimeoutMs, e.executionTimeoutMs);
  const next = createRun(eng, {
    namespace: e.namespace,
    workflowId: e.workflowId,
    workflowType: a.workflowType?.name || e.workflowType,
    taskQueue: a.taskQueue?.name || e.taskQueue,
    input: a.input,
    header: a.header,
    memo: a.memo?.fields,
    searchAttributes: withoutNilPayloads(a.searchAttributes?.indexedFields),
    runTimeoutMs,
    executionTimeoutMs: e.executionTimeoutMs,
    taskTimeoutMs: msFromDur(a.workflowTaskTimeout) || e.workflowTaskTimeoutMs,
    retryPolicy: a.retryPolicy
      ? normalizeRetryPolicy(a.retryPolicy, 'invalid WorkflowRetryPolicy on ContinueAsNewWorkflowExecutionCommand')
      : undefined,
    cronSchedule: a.cronSchedule || undefined,
    requestId: eng.newId(),
    backoffMs: minChainBackoff(eng, e, msFromDur(a.backoffStartInterval)),
    parent: e.parent,
    root: e.root,
    continuedExecutionRunId: e.runId,
    initiator,
    continuedFailure: a.failure,
    lastCompletionResult: a.lastCompletionResult,
    attempt: initiator === ContinueAsNewInitiator.RETRY ? e.attempt + 1 : 1,
    firstRunId: e.firstRunId,
    executionExpirationTime: e.executionExpirationTime,
    priority: started.priority,
    completionCallbacks: started.completionCallbacks,
    links: e.history[0]?.links,
  });
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_CONTINUED_AS_NEW, 'workflowExecutionContinuedAsNewEventAttributes', {
      newExecutionRunId: next.runId,
      workflowType: { name: next.workflowType },
      taskQueue: { name: next.taskQueue, kind: 1 },
      input: a.input,
      workflowRunTimeout: durFromMs(next.runTimeoutMs),
      workflowTaskTimeout: durFromMs(next.workflowTaskTimeoutMs),
      workflowTaskCompletedEventId: completedEventId,
      backoffStartInterval: a.backoffStartInterval,
      initiator,
      failure: a.failure,
      lastCompletionResult: a.lastCompletionResult,
      header: a.header,
      memo: a.memo,
      searchAttributes: a.searchAttributes && {
        indexedFields: typedSearchAttributes(eng, e.namespace, a.searchAttributes.indexedFields ?? {}),
      },
    }),
  );
  finish(eng, e, WfStatus.CONTINUED_AS_NEW, next);
}

/** A run never outlives its chain: the run timeout is at most the execution timeout. */
function capRunTimeout(runMs: number, executionMs: number): number {
  if (executionMs === 0) return runMs;
  if (runMs === 0) return executionMs;
  return Math.min(runMs, executionMs);
}

/** A forced close while a workflow task runs records that task as failed first (unless transient: it leaves no trace). */
function failRunningTask(eng: Engine, e: Execution): void {
  const wft = e.wft;
  if (wft?.startedEventId === undefined || isTransient(wft)) return;
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_TASK_FAILED, 'workflowTaskFailedEventAttributes', {
      scheduledEventId: wft.scheduledEventId,
      startedEventId: wft.startedEventId,
      cause: 17, // FORCE_CLOSE_COMMAND
      identity: HISTORY_SERVICE_IDENTITY,
    }),
  );
}

function finish(eng: Engine, e: Execution, status: number, next: Execution | undefined): void {
  e.newRunId = next?.runId;
  if (next) {
    // The chain goes on: the parent keeps waiting for the last run.
    eng.current.set(`${e.namespace}\u0000${e.workflowId}`, next.runId);
  }
  eng.closeRun(e, status);
}
