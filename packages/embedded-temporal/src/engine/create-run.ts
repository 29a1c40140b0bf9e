// A new run: its state, its WorkflowExecutionStarted event (and SignalWithStart's signal), its start
// backoff and run/execution timeout timers, and its first workflow task. Closing runs, and the new
// runs of retry, cron and continue-as-new chains, are lifecycle.ts's.
import type { Engine } from './engine';
import { Execution, ParentInfo, Payload, Payloads, Failure, RetryPolicy } from './state';
import { EventType, WfStatus, durFromMs, tsFromMs } from '../proto';
import { scheduleWorkflowTask } from './workflow-tasks';
import { retryPolicyToWire } from './retry';
import { typedSearchAttributes } from './search-attributes';
import { timeoutRun } from './lifecycle';

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
  /** Preset run id (default: a fresh one), for when it must be known before the run exists. */
  runId?: string;
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
  /** The starter takes the first workflow task itself (eager workflow start). */
  eagerExecutionAccepted?: boolean;
  /** Signal recorded right after the start event (SignalWithStart). */
  signal?: {
    signalName: string;
    input?: Payloads;
    identity?: string;
    header?: object;
    requestId?: string;
    links?: object[];
  };
}

/** When and under which ids a new run starts: createRun's figures, worked out before the run exists. */
interface RunIds {
  now: number;
  runId: string;
  firstRunId: string;
  expiration: number;
}

export function createRun(eng: Engine, p: RunParams): Execution {
  // One instant: the run's start time (and so its execution time, which the next run of a chain
  // is spaced from) is its start event's time, as on the server. Apart, a loaded engine recorded
  // the event some milliseconds after the time it computed with (the conformance suite's chain
  // spacing read 989 ms for 1 s).
  return eng.atOneInstant(() => createRunNow(eng, p));
}

function createRunNow(eng: Engine, p: RunParams): Execution {
  const now = eng.now();
  const runId = p.runId ?? eng.newId();
  const firstRunId = p.firstRunId ?? runId;
  const expiration = p.executionExpirationTime ?? (p.executionTimeoutMs > 0 ? now + p.executionTimeoutMs : 0);
  const e = newExecution(eng, p, { now, runId, firstRunId, expiration });
  if (p.parent && !p.root) e.root = { workflowId: p.workflowId, runId };
  eng.addRun(e);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_STARTED, 'workflowExecutionStartedEventAttributes', startedAttributes(p, e)),
  );
  if (p.userMetadata) e.history[0].userMetadata = p.userMetadata;
  if (p.links) e.history[0].links = p.links;
  if (p.signal) recordStartSignal(eng, e, p.signal);
  armRunTimers(eng, e);
  scheduleWorkflowTask(eng, e);
  return e;
}

/** Start backoff and run/execution timeouts; also used after recovery. */
export function armRunTimers(eng: Engine, e: Execution): void {
  if (e.executionTime > eng.now()) {
    // A cancel request may have started the run early; then there is nothing left to do.
    eng.setTimer(e, 'start-backoff', e.executionTime, (run) => {
      if (!run.history.some((h) => h.eventType === EventType.WORKFLOW_TASK_SCHEDULED)) scheduleWorkflowTask(eng, run);
    });
  }
  const runDeadline = e.runTimeoutMs > 0 ? e.executionTime + e.runTimeoutMs : 0;
  const deadlines = [runDeadline, e.executionExpirationTime].filter((d) => d > 0);
  if (deadlines.length) {
    eng.setTimer(e, 'run-timeout', Math.min(...deadlines), (run) => timeoutRun(eng, run));
  }
}

/** The run's state as it starts, before its first event. */
function newExecution(eng: Engine, p: RunParams, at: RunIds): Execution {
  return {
    namespace: p.namespace,
    workflowId: p.workflowId,
    runId: at.runId,
    firstRunId: at.firstRunId,
    workflowType: p.workflowType,
    taskQueue: p.taskQueue,
    status: WfStatus.RUNNING,
    startTime: at.now,
    executionTime: at.now + p.backoffMs,
    nextEventId: 1,
    history: [],
    buffered: [],
    requestIds: [p.requestId],
    startRequestId: p.requestId,
    runTimeoutMs: p.runTimeoutMs,
    executionTimeoutMs: p.executionTimeoutMs,
    executionExpirationTime: at.expiration,
    workflowTaskTimeoutMs: p.taskTimeoutMs,
    attempt: p.attempt,
    retryPolicy: p.retryPolicy,
    cronSchedule: p.cronSchedule || undefined,
    memo: p.memo,
    searchAttributes: typedSearchAttributes(eng, p.namespace, p.searchAttributes),
    parent: p.parent,
    // Only a child inherits a root: every run of a top-level chain is its own root.
    root: p.parent ? p.root : { workflowId: p.workflowId, runId: at.runId },
    wftAttempt: 1,
    lastCompletedWftStartedEventId: 0,
    activities: {},
    timers: {},
    children: {},
    cancelRequested: false,
    stateTransitions: 0,
    historySizeBytes: 0,
  };
}

/** The attributes of the run's WorkflowExecutionStarted event. */
function startedAttributes(p: RunParams, e: Execution): object {
  return {
    workflowType: { name: p.workflowType },
    parentWorkflowNamespace: p.parent?.namespace,
    parentWorkflowNamespaceId: p.parent?.namespaceId,
    parentWorkflowExecution: p.parent ? { workflowId: p.parent.workflowId, runId: p.parent.runId } : undefined,
    parentInitiatedEventId: p.parent?.initiatedEventId,
    taskQueue: { name: p.taskQueue, kind: 1 },
    input: p.input,
    // Unset timeouts stay unset, as on the real server (whose backoff is always there).
    workflowExecutionTimeout: p.executionTimeoutMs > 0 ? durFromMs(p.executionTimeoutMs) : undefined,
    workflowRunTimeout: p.runTimeoutMs > 0 ? durFromMs(p.runTimeoutMs) : undefined,
    workflowTaskTimeout: durFromMs(p.taskTimeoutMs),
    continuedExecutionRunId: p.continuedExecutionRunId,
    initiator: p.initiator,
    continuedFailure: p.continuedFailure,
    lastCompletionResult: p.lastCompletionResult,
    originalExecutionRunId: e.runId,
    identity: p.identity,
    firstExecutionRunId: e.firstRunId,
    retryPolicy: retryPolicyToWire(p.retryPolicy),
    attempt: p.attempt,
    workflowExecutionExpirationTime: e.executionExpirationTime ? tsFromMs(e.executionExpirationTime) : undefined,
    cronSchedule: p.cronSchedule,
    firstWorkflowTaskBackoff: durFromMs(p.backoffMs),
    memo: p.memo ? { fields: p.memo } : undefined,
    searchAttributes: e.searchAttributes ? { indexedFields: e.searchAttributes } : undefined,
    header: p.header,
    workflowId: p.workflowId,
    completionCallbacks: p.completionCallbacks,
    rootWorkflowExecution: p.parent ? e.root : undefined,
    priority: p.priority,
    eagerExecutionAccepted: p.eagerExecutionAccepted || undefined,
  };
}

/** SignalWithStart's signal, recorded right after the start event. */
function recordStartSignal(eng: Engine, e: Execution, signal: NonNullable<RunParams['signal']>): void {
  const ev = eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
    signalName: signal.signalName,
    input: signal.input,
    identity: signal.identity,
    header: signal.header,
    requestId: signal.requestId,
  });
  if (signal.links) ev.links = signal.links;
  eng.appendEvent(e, ev);
}
