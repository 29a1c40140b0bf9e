// DescribeWorkflowExecution and the execution-info shape shared with List.
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import { PendingActivityState, durFromMs, tsFromMs } from '../proto';

export function executionInfo(eng: Engine, e: Execution): object {
  return {
    execution: { workflowId: e.workflowId, runId: e.runId },
    type: { name: e.workflowType },
    startTime: tsFromMs(e.startTime),
    closeTime: e.closeTime ? tsFromMs(e.closeTime) : undefined,
    status: e.status,
    historyLength: e.nextEventId - 1,
    parentNamespaceId: e.parent?.namespaceId,
    parentExecution: e.parent ? { workflowId: e.parent.workflowId, runId: e.parent.runId } : undefined,
    executionTime: tsFromMs(e.executionTime),
    memo: { fields: e.memo ?? {} },
    searchAttributes: { indexedFields: e.searchAttributes ?? {} },
    taskQueue: e.taskQueue,
    stateTransitionCount: e.stateTransitions,
    historySizeBytes: e.historySizeBytes,
    rootExecution: e.root,
    firstRunId: e.firstRunId,
    executionDuration: e.closeTime ? durFromMs(e.closeTime - e.executionTime) : undefined,
  };
}

export function describeExecution(eng: Engine, e: Execution): object {
  const now = eng.now();
  return {
    executionConfig: {
      taskQueue: { name: e.taskQueue, kind: 1 },
      workflowExecutionTimeout: durFromMs(e.executionTimeoutMs),
      workflowRunTimeout: durFromMs(e.runTimeoutMs),
      defaultWorkflowTaskTimeout: durFromMs(e.workflowTaskTimeoutMs),
    },
    workflowExecutionInfo: executionInfo(eng, e),
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
  };
}
