// DescribeWorkflowExecution, and the execution info List returns: the same message
// filled from two sources on the real server, the run's mutable state (describe)
// and its visibility record (List), which knows less about a run still open.
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import { EventType, PendingActivityState, durFromMs, tsFromMs } from '../proto';
import { retryPolicyToWire } from '../engine/retry';
import { typedSearchAttributes } from '../engine/search-attributes';
import { visibilitySearchAttributes } from '../engine/search-attribute-values';
import { resetPointsToWire } from '../engine/worker-versions';

/** Go's zero time.Time as a Timestamp: what the real server sends for "no run timeout". */
const GO_ZERO_TIME = { seconds: -62135596800, nanos: 0 };

function commonInfo(e: Execution): Record<string, unknown> {
  return {
    execution: { workflowId: e.workflowId, runId: e.runId },
    type: { name: e.workflowType },
    startTime: tsFromMs(e.startTime),
    closeTime: e.closeTime ? tsFromMs(e.closeTime) : undefined,
    status: e.status,
    parentNamespaceId: e.parent?.namespaceId,
    parentExecution: e.parent ? { workflowId: e.parent.workflowId, runId: e.parent.runId } : undefined,
    executionTime: tsFromMs(e.executionTime),
    memo: { fields: e.memo ?? {} },
    taskQueue: e.taskQueue,
    rootExecution: e.root,
    executionDuration: e.closeTime ? durFromMs(e.closeTime - e.executionTime) : undefined,
  };
}

/**
 * A run as ListWorkflowExecutions shows it. Visibility records the counters of a
 * run (history length and size, state transitions) when it closes (0, so absent
 * on the wire, until then), and has no first run id.
 */
export function listedExecutionInfo(eng: Engine, e: Execution): object {
  const closed = e.closeTime !== undefined;
  return {
    ...commonInfo(e),
    searchAttributes: { indexedFields: visibilitySearchAttributes(eng, e.namespace, e.searchAttributes) },
    historyLength: closed ? e.nextEventId - 1 : 0,
    stateTransitionCount: closed ? e.stateTransitions : 0,
    historySizeBytes: closed ? e.historySizeBytes : 0,
  };
}

function describedExecutionInfo(eng: Engine, e: Execution): object {
  return {
    ...commonInfo(e),
    historyLength: e.nextEventId - 1,
    searchAttributes: { indexedFields: typedSearchAttributes(eng, e.namespace, e.searchAttributes ?? {}) },
    autoResetPoints: resetPointsToWire(e),
    stateTransitionCount: e.stateTransitions,
    historySizeBytes: e.historySizeBytes,
    mostRecentWorkerVersionStamp: e.workerVersionStamp,
    firstRunId: e.firstRunId,
  };
}

function extendedInfo(e: Execution): object {
  return {
    executionExpirationTime: e.executionExpirationTime ? tsFromMs(e.executionExpirationTime) : undefined,
    runExpirationTime: e.runTimeoutMs > 0 ? tsFromMs(e.executionTime + e.runTimeoutMs) : GO_ZERO_TIME,
    cancelRequested: e.cancelRequested,
    // A reset run started when it was made; its history (and this) go back to the original start.
    lastResetTime: e.resetFrom ? tsFromMs(e.startTime) : undefined,
    originalStartTime: tsFromMs(e.resetFrom?.originalStartTime ?? e.startTime),
    resetRunId: e.resetRunId,
    requestIdInfos: { [e.startRequestId]: { eventType: EventType.WORKFLOW_EXECUTION_STARTED, eventId: 1 } },
  };
}

export function describeExecution(eng: Engine, e: Execution): object {
  const now = eng.now();
  return {
    executionConfig: {
      taskQueue: { name: e.taskQueue, kind: 1 },
      workflowExecutionTimeout: e.executionTimeoutMs > 0 ? durFromMs(e.executionTimeoutMs) : undefined,
      workflowRunTimeout: e.runTimeoutMs > 0 ? durFromMs(e.runTimeoutMs) : undefined,
      defaultWorkflowTaskTimeout: durFromMs(e.workflowTaskTimeoutMs),
    },
    workflowExecutionInfo: describedExecutionInfo(eng, e),
    pendingActivities: Object.values(e.activities).map((a) => ({
      activityId: a.activityId,
      activityType: { name: a.activityType },
      state: a.cancelRequested
        ? PendingActivityState.CANCEL_REQUESTED
        : a.startedTime !== undefined
          ? PendingActivityState.STARTED
          : PendingActivityState.SCHEDULED,
      heartbeatDetails: a.heartbeatDetails,
      lastHeartbeatTime: a.lastHeartbeatTime ? tsFromMs(a.lastHeartbeatTime) : undefined,
      lastStartedTime: a.startedTime ? tsFromMs(a.startedTime) : undefined,
      attempt: a.attempt,
      maximumAttempts: a.retryPolicy?.maximumAttempts ?? 0,
      scheduledTime: tsFromMs(a.retryAt ?? a.currentAttemptScheduledTime),
      expirationTime: a.scheduleToCloseMs > 0 ? tsFromMs(a.scheduledTime + a.scheduleToCloseMs) : undefined,
      lastFailure: a.lastFailure,
      lastWorkerIdentity: a.startedIdentity,
      currentRetryInterval: a.retryAt ? durFromMs(Math.max(0, a.retryAt - now)) : undefined,
      activityOptions: {
        taskQueue: { name: a.taskQueue, normalName: a.taskQueue },
        scheduleToCloseTimeout: durFromMs(a.scheduleToCloseMs),
        scheduleToStartTimeout: durFromMs(a.scheduleToStartMs),
        startToCloseTimeout: durFromMs(a.startToCloseMs),
        heartbeatTimeout: durFromMs(a.heartbeatMs),
        // Without the non-retryable types, which the real server leaves out here.
        retryPolicy: a.retryPolicy && { ...retryPolicyToWire(a.retryPolicy), nonRetryableErrorTypes: undefined },
      },
    })),
    pendingChildren: Object.values(e.children).map((c) => ({
      workflowId: c.workflowId,
      runId: c.runId,
      workflowTypeName: c.workflowType,
      initiatedId: c.initiatedEventId,
      parentClosePolicy: c.parentClosePolicy,
    })),
    pendingWorkflowTask: e.wft
      ? {
          state: e.wft.startedEventId !== undefined ? 2 : 1,
          scheduledTime: tsFromMs(e.wft.scheduledTime),
          originalScheduledTime: tsFromMs(e.wft.scheduledTime),
          startedTime: e.wft.startedTime ? tsFromMs(e.wft.startedTime) : undefined,
          attempt: e.wft.attempt,
        }
      : undefined,
    workflowExtendedInfo: extendedInfo(e),
  };
}
