// Starting runs and closing them: completion, failure, timeout, cancellation,
// termination, continue-as-new, and the new runs that retry and cron create.
import type { Engine } from './engine';
import { Execution, ParentInfo, Payload, Payloads, Failure, RetryPolicy } from './state';
import { ContinueAsNewInitiator, EventType, RetryState, TimeoutType, WfStatus, durFromMs, tsFromMs } from '../proto';
import { scheduleWorkflowTask } from './workflow-tasks';
import { decideRetry, retryPolicyToWire } from './retry';
import { nextCronTime } from './cron-schedule';

export interface RunParams {
  namespace: string;
  workflowId: string;
  workflowType: string;
  taskQueue: string;
  input?: Payloads;
  header?: object;
  memo?: Record<string, Payload>;
  searchAttributes?: Record<string, Payload>;
  runTimeoutMs: number;
  executionTimeoutMs: number;
  taskTimeoutMs: number;
  retryPolicy?: RetryPolicy;
  cronSchedule?: string;
  requestId: string;
  identity?: string;
  backoffMs: number;
  parent?: ParentInfo;
  root?: { workflowId: string; runId: string };
  continuedExecutionRunId?: string;
  initiator?: number;
  continuedFailure?: Failure;
  lastCompletionResult?: Payloads;
  attempt: number;
  firstRunId?: string;
  executionExpirationTime?: number;
  userMetadata?: object;
  priority?: object;
  completionCallbacks?: object[];
  links?: object[];
  /** Signal recorded right after the start event (SignalWithStart). */
  signal?: { signalName: string; input?: Payloads; identity?: string; header?: object; requestId?: string };
}

export function createRun(eng: Engine, p: RunParams): Execution {
  const now = eng.now();
  const runId = eng.newId();
  const firstRunId = p.firstRunId ?? runId;
  const expiration = p.executionExpirationTime ?? (p.executionTimeoutMs > 0 ? now + p.executionTimeoutMs : 0);
  const e: Execution = {
    namespace: p.namespace,
    workflowId: p.workflowId,
    runId,
    firstRunId,
    workflowType: p.workflowType,
    taskQueue: p.taskQueue,
    status: WfStatus.RUNNING,
    startTime: now,
    executionTime: now + p.backoffMs,
    nextEventId: 1,
    history: [],
    buffered: [],
    requestIds: [p.requestId],
    startRequestId: p.requestId,
    runTimeoutMs: p.runTimeoutMs,
    executionTimeoutMs: p.executionTimeoutMs,
    executionExpirationTime: expiration,
    workflowTaskTimeoutMs: p.taskTimeoutMs,
    attempt: p.attempt,
    retryPolicy: p.retryPolicy,
    cronSchedule: p.cronSchedule || undefined,
    memo: p.memo,
    searchAttributes: p.searchAttributes,
    parent: p.parent,
    root: p.root ?? (p.parent ? undefined : { workflowId: p.workflowId, runId }),
    wftAttempt: 1,
    lastCompletedWftStartedEventId: 0,
    activities: {},
    timers: {},
    children: {},
    cancelRequested: false,
    stateTransitions: 0,
    historySizeBytes: 0,
  };
  if (p.parent && !p.root) e.root = { workflowId: p.workflowId, runId };
  eng.addRun(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_STARTED, 'workflowExecutionStartedEventAttributes', {
      workflowType: { name: p.workflowType },
      parentWorkflowNamespace: p.parent?.namespace,
      parentWorkflowNamespaceId: p.parent?.namespaceId,
      parentWorkflowExecution: p.parent ? { workflowId: p.parent.workflowId, runId: p.parent.runId } : undefined,
      parentInitiatedEventId: p.parent?.initiatedEventId,
      taskQueue: { name: p.taskQueue, kind: 1 },
      input: p.input,
      workflowExecutionTimeout: durFromMs(p.executionTimeoutMs),
      workflowRunTimeout: durFromMs(p.runTimeoutMs),
      workflowTaskTimeout: durFromMs(p.taskTimeoutMs),
      continuedExecutionRunId: p.continuedExecutionRunId,
      initiator: p.initiator,
      continuedFailure: p.continuedFailure,
      lastCompletionResult: p.lastCompletionResult,
      originalExecutionRunId: runId,
      identity: p.identity,
      firstExecutionRunId: firstRunId,
      retryPolicy: retryPolicyToWire(p.retryPolicy),
      attempt: p.attempt,
      workflowExecutionExpirationTime: expiration ? tsFromMs(expiration) : undefined,
      cronSchedule: p.cronSchedule,
      firstWorkflowTaskBackoff: p.backoffMs > 0 ? durFromMs(p.backoffMs) : undefined,
      memo: p.memo ? { fields: p.memo } : undefined,
      searchAttributes: p.searchAttributes ? { indexedFields: p.searchAttributes } : undefined,
      header: p.header,
      workflowId: p.workflowId,
      completionCallbacks: p.completionCallbacks,
      rootWorkflowExecution: e.root,
      priority: p.priority,
    }),
  );
  if (p.userMetadata) e.history[0].userMetadata = p.userMetadata;
  if (p.links) e.history[0].links = p.links;
  if (p.signal) {
    eng.appendEvent(
      e,
      eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
        signalName: p.signal.signalName,
        input: p.signal.input,
        identity: p.signal.identity,
        header: p.signal.header,
        requestId: p.signal.requestId,
      }),
    );
  }
  armRunTimers(eng, e);
  scheduleWorkflowTask(eng, e);
  return e;
}

/** Start backoff and run/execution timeouts; also used after recovery. */
export function armRunTimers(eng: Engine, e: Execution): void {
  if (e.executionTime > eng.now()) {
    eng.setTimer(e, 'start-backoff', e.executionTime, (run) => scheduleWorkflowTask(eng, run));
  }
  const runDeadline = e.runTimeoutMs > 0 ? e.executionTime + e.runTimeoutMs : 0;
  const deadlines = [runDeadline, e.executionExpirationTime].filter((d) => d > 0);
  if (deadlines.length) {
    eng.setTimer(e, 'run-timeout', Math.min(...deadlines), (run) => timeoutRun(eng, run));
  }
}

/** Parameters for the next run of the same chain (retry, cron, continue-as-new). */
function nextRunParams(e: Execution, over: Partial<RunParams>): RunParams {
  const started = e.history[0]?.workflowExecutionStartedEventAttributes ?? {};
  return {
    namespace: e.namespace,
    workflowId: e.workflowId,
    workflowType: e.workflowType,
    taskQueue: e.taskQueue,
    input: started.input,
    header: started.header,
    memo: e.memo,
    searchAttributes: e.searchAttributes,
    runTimeoutMs: e.runTimeoutMs,
    executionTimeoutMs: e.executionTimeoutMs,
    taskTimeoutMs: e.workflowTaskTimeoutMs,
    retryPolicy: e.retryPolicy,
    cronSchedule: e.cronSchedule,
    requestId: `${e.runId}:next`,
    backoffMs: 0,
    parent: e.parent,
    root: e.root,
    continuedExecutionRunId: e.runId,
    attempt: 1,
    firstRunId: e.firstRunId,
    executionExpirationTime: e.executionExpirationTime,
    ...over,
  };
}

function cronNext(eng: Engine, e: Execution, over: Partial<RunParams>): Execution | undefined {
  if (!e.cronSchedule) return undefined;
  const now = eng.now();
  const next = nextCronTime(e.cronSchedule, now, e.startTime);
  if (next === undefined) return undefined;
  if (e.executionExpirationTime && next >= e.executionExpirationTime) return undefined;
  return createRun(eng, nextRunParams(e, { backoffMs: next - now, initiator: ContinueAsNewInitiator.CRON_SCHEDULE, ...over }));
}

function retryNext(eng: Engine, e: Execution, failure: Failure): { run?: Execution; state: number } {
  const d = decideRetry(e.retryPolicy, e.attempt, failure, eng.now(), e.executionExpirationTime);
  if (!d.retry) return { state: d.state };
  const run = createRun(
    eng,
    nextRunParams(e, { backoffMs: d.delayMs, initiator: ContinueAsNewInitiator.RETRY, attempt: e.attempt + 1, continuedFailure: failure }),
  );
  return { run, state: RetryState.IN_PROGRESS };
}

function lastCompletionOf(e: Execution): Payloads | undefined {
  return e.history[0]?.workflowExecutionStartedEventAttributes?.lastCompletionResult;
}

export function completeRun(eng: Engine, e: Execution, result: Payloads | undefined, completedEventId: number): void {
  eng.releaseAll(e);
  const next = cronNext(eng, e, { lastCompletionResult: result });
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

export function failRun(eng: Engine, e: Execution, failure: Failure, completedEventId: number): void {
  eng.releaseAll(e);
  const retry = retryNext(eng, e, failure);
  let next = retry.run;
  const state = retry.state;
  if (!next) next = cronNext(eng, e, { continuedFailure: failure, lastCompletionResult: lastCompletionOf(e) });
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_FAILED, 'workflowExecutionFailedEventAttributes', {
      failure,
      retryState: state,
      workflowTaskCompletedEventId: completedEventId,
      newExecutionRunId: next?.runId,
    }),
  );
  finish(eng, e, WfStatus.FAILED, next);
}

export function timeoutRun(eng: Engine, e: Execution): void {
  if (!eng.isOpen(e)) return;
  eng.releaseAll(e);
  const failure = { message: 'workflow timed out', timeoutFailureInfo: { timeoutType: TimeoutType.START_TO_CLOSE }, source: 'Server' };
  let next: Execution | undefined;
  let state: number = RetryState.TIMEOUT;
  if (eng.now() < e.executionExpirationTime || !e.executionExpirationTime) {
    const r = retryNext(eng, e, { ...failure, timeoutFailureInfo: undefined });
    next = r.run;
    state = r.run ? RetryState.IN_PROGRESS : RetryState.TIMEOUT;
    if (!next) next = cronNext(eng, e, { lastCompletionResult: lastCompletionOf(e) });
  }
  failRunningTask(eng, e);
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

export function terminateRun(eng: Engine, e: Execution, reason: string | undefined, details: Payloads | undefined, identity?: string): void {
  eng.releaseAll(e);
  failRunningTask(eng, e);
  eng.flushBuffered(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_TERMINATED, 'workflowExecutionTerminatedEventAttributes', { reason, details, identity }),
  );
  finish(eng, e, WfStatus.TERMINATED, undefined);
}

export function continueAsNew(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  eng.releaseAll(e);
  const { msFromDur } = require('../proto');
  const next = createRun(
    eng,
    nextRunParams(e, {
      workflowType: a.workflowType?.name || e.workflowType,
      taskQueue: a.taskQueue?.name || e.taskQueue,
      input: a.input,
      header: a.header,
      memo: a.memo?.fields ?? e.memo,
      searchAttributes: a.searchAttributes?.indexedFields ?? e.searchAttributes,
      runTimeoutMs: msFromDur(a.workflowRunTimeout) || e.runTimeoutMs,
      taskTimeoutMs: msFromDur(a.workflowTaskTimeout) || e.workflowTaskTimeoutMs,
      backoffMs: msFromDur(a.backoffStartInterval),
      initiator: a.initiator || ContinueAsNewInitiator.WORKFLOW,
      continuedFailure: a.failure,
      lastCompletionResult: a.lastCompletionResult,
      retryPolicy: a.retryPolicy ? require('./retry').normalizeRetryPolicy(a.retryPolicy, 'ContinueAsNew') : e.retryPolicy,
    }),
  );
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
      initiator: a.initiator || ContinueAsNewInitiator.WORKFLOW,
      failure: a.failure,
      lastCompletionResult: a.lastCompletionResult,
      header: a.header,
      memo: a.memo,
      searchAttributes: a.searchAttributes,
    }),
  );
  finish(eng, e, WfStatus.CONTINUED_AS_NEW, next);
}

/** A forced close while a workflow task runs records that task as failed first. */
function failRunningTask(eng: Engine, e: Execution): void {
  const wft = e.wft;
  if (wft?.startedEventId === undefined) return;
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_TASK_FAILED, 'workflowTaskFailedEventAttributes', {
      scheduledEventId: wft.scheduledEventId,
      startedEventId: wft.startedEventId,
      cause: 17, // FORCE_CLOSE_COMMAND
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
