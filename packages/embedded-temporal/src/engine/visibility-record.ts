// The visibility record of a run: what List/Count filter on.
import type { Execution } from './state';
import type { ExecutionStatusName, VisibilityRecord } from '../visibility/query';
import { decodedAttributes } from './search-attributes';

const STATUS: Record<number, ExecutionStatusName> = {
  1: 'Running',
  2: 'Completed',
  3: 'Failed',
  4: 'Canceled',
  5: 'Terminated',
  6: 'ContinuedAsNew',
  7: 'TimedOut',
};

export function toRecord(e: Execution): VisibilityRecord {
  // Like the real server's visibility, which records these counters when a run closes
  // (they are 0 until then, not NULL).
  const closed = e.closeTime !== undefined;
  return {
    workflowId: e.workflowId,
    runId: e.runId,
    workflowType: e.workflowType,
    taskQueue: e.taskQueue,
    status: STATUS[e.status],
    startTime: e.startTime,
    executionTime: e.executionTime,
    closeTime: e.closeTime,
    historyLength: closed ? e.nextEventId - 1 : 0,
    parentWorkflowId: e.parent?.workflowId,
    parentRunId: e.parent?.runId,
    rootWorkflowId: e.root?.workflowId,
    rootRunId: e.root?.runId,
    historySizeBytes: closed ? e.historySizeBytes : 0,
    stateTransitionCount: closed ? e.stateTransitions : 0,
    searchAttributes: decodedAttributes(e),
  };
}
