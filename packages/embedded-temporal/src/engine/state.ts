// The mutable state of one workflow run: what Temporal's history service keeps
// beside the history itself. Everything here is persisted as one JSON value per
// run (see persistence.ts); history events are appended separately.

export type Payloads = { payloads?: Payload[] };
export type Payload = { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
export type Failure = Record<string, any>;
export type HistoryEvent = Record<string, any> & { eventId: number; eventType: number };

export interface RetryPolicy {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** 0 = unlimited */
  maximumAttempts: number;
  nonRetryableErrorTypes: string[];
}

export interface ActivityInfo {
  scheduledEventId: number;
  activityId: string;
  activityType: string;
  taskQueue: string;
  attempt: number;
  /** First attempt's schedule time; schedule-to-close runs from here. */
  scheduledTime: number;
  currentAttemptScheduledTime: number;
  startedTime?: number;
  startedIdentity?: string;
  startedRequestId?: string;
  scheduleToCloseMs: number;
  scheduleToStartMs: number;
  startToCloseMs: number;
  heartbeatMs: number;
  retryPolicy?: RetryPolicy;
  heartbeatDetails?: Payloads;
  lastHeartbeatTime?: number;
  lastFailure?: Failure;
  cancelRequested: boolean;
  /** Set while waiting for the next attempt (server-side retry backoff). */
  retryAt?: number;
  /** Build of the worker running the current attempt (worker-versions.ts). */
  startedWorkerVersion?: import('./worker-versions').VersionStamp;
}

export interface TimerInfo {
  timerId: string;
  startedEventId: number;
  fireTime: number;
}

export interface ChildInfo {
  initiatedEventId: number;
  startedEventId?: number;
  namespace: string;
  workflowId: string;
  runId?: string;
  workflowType: string;
  parentClosePolicy: number;
}

export interface WorkflowTaskInfo {
  scheduledEventId: number;
  startedEventId?: number;
  attempt: number;
  /** Dispatched through the sticky queue of the last worker. */
  sticky: boolean;
  taskQueue: string;
  scheduledTime: number;
  startedTime?: number;
  identity?: string;
  requestId?: string;
  /** Start-to-close timeout of this attempt (absent in runs persisted before it was kept). */
  timeoutMs?: number;
  /** A retry of a failed task whose scheduled/started events are not written (transient-task.ts). */
  transient?: boolean;
  /** History size and continue-as-new suggestion its started event carries (history-limits.ts). */
  hints?: { historySizeBytes: number; suggestContinueAsNew?: boolean; suggestContinueAsNewReasons?: number[] };
}

export interface ParentInfo {
  namespace: string;
  namespaceId: string;
  workflowId: string;
  runId: string;
  initiatedEventId: number;
}

export interface Execution {
  namespace: string;
  workflowId: string;
  runId: string;
  firstRunId: string;
  workflowType: string;
  taskQueue: string;
  status: number;
  startTime: number;
  /** When the first workflow task may run (start delay, cron or retry backoff). */
  executionTime: number;
  closeTime?: number;
  nextEventId: number;
  history: HistoryEvent[];
  /** Events that arrived while a workflow task was running; written when it ends. */
  buffered: HistoryEvent[];
  requestIds: string[];
  startRequestId: string;
  runTimeoutMs: number;
  executionTimeoutMs: number;
  /** Absolute end of the whole chain of runs (0 = none). */
  executionExpirationTime: number;
  workflowTaskTimeoutMs: number;
  attempt: number;
  retryPolicy?: RetryPolicy;
  cronSchedule?: string;
  memo?: Record<string, Payload>;
  searchAttributes?: Record<string, Payload>;
  parent?: ParentInfo;
  root?: { workflowId: string; runId: string };
  wft?: WorkflowTaskInfo;
  /** Attempt of the current workflow task, or of the next one (grows while tasks fail or time out). */
  wftAttempt: number;
  /** Sticky queue of the worker that completed the last workflow task. */
  sticky?: { queue: string; scheduleToStartMs: number };
  lastCompletedWftStartedEventId: number;
  activities: Record<number, ActivityInfo>;
  timers: Record<string, TimerInfo>;
  children: Record<number, ChildInfo>;
  cancelRequested: boolean;
  /** Initiated child starts / external signals / external cancels not yet carried out. */
  pendingEffects?: { kind: 'child' | 'signal' | 'cancel'; initiatedEventId: number }[];
  /** The run this one continued into (continue-as-new, retry, cron). */
  newRunId?: string;
  stateTransitions: number;
  historySizeBytes: number;
  /** Stamp of the worker that completed the last workflow task (worker-versions.ts). */
  workerVersionStamp?: import('./worker-versions').VersionStamp;
  resetPoints?: import('./worker-versions').ResetPoint[];
  /** The run a reset of this one made (ResetWorkflowExecution, reset.ts). */
  resetRunId?: string;
  /** This run is a reset's: the run it was made from, the reset's request id, and the original start time. */
  resetFrom?: { baseRunId: string; requestId: string; originalStartTime: number };
}

export function execKey(namespace: string, workflowId: string, runId: string): string {
  return `${namespace}\u0000${workflowId}\u0000${runId}`;
}

export function isOpen(e: Execution): boolean {
  return e.status === 1;
}
