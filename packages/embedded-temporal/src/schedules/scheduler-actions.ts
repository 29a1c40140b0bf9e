// What a schedule does to workflows: start one for a buffered action (with the
// id, search attributes and reuse policy the real scheduler uses), and cancel or
// terminate the running one when the overlap policy asks for it.
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import { paramsFromRequest, startWorkflow } from '../engine/start';
import { terminateRun } from '../engine/lifecycle';
import { requestCancelRun } from '../engine/signals';
import { OverlapPolicy, ReusePolicy, WfStatus } from '../proto';
import {
  ActionResult,
  BufferedStart,
  RunningWorkflow,
  ScheduleRecord,
  rfc3339Seconds,
  searchAttributePayload,
} from './scheduler-state';

export function schedulerIdentity(rec: ScheduleRecord): string {
  return `temporal-scheduler-${rec.namespace}-${rec.scheduleId}`;
}

/** Starts the schedule's workflow for one buffered action; throws what the start would answer. */
export function startScheduledWorkflow(eng: Engine, rec: ScheduleRecord, start: BufferedStart): ActionResult {
  const sw = rec.action.startWorkflow;
  const nominal = rfc3339Seconds(start.nominalMs);
  // The timestamp is always appended, so every action has an id of its own.
  const workflowId = `${sw.workflowId ?? ''}-${nominal}`;
  const searchAttributes = {
    indexedFields: {
      ...(sw.searchAttributes?.indexedFields ?? {}),
      TemporalScheduledStartTime: searchAttributePayload(nominal, 'Datetime'),
      TemporalScheduledById: searchAttributePayload(rec.scheduleId, 'Keyword'),
    },
  };
  const params = paramsFromRequest(eng, {
    namespace: rec.namespace,
    workflowId,
    workflowType: sw.workflowType,
    taskQueue: sw.taskQueue,
    input: sw.input,
    workflowExecutionTimeout: sw.workflowExecutionTimeout,
    workflowRunTimeout: sw.workflowRunTimeout,
    workflowTaskTimeout: sw.workflowTaskTimeout,
    identity: schedulerIdentity(rec),
    requestId: eng.newId(),
    retryPolicy: sw.retryPolicy,
    memo: sw.memo,
    searchAttributes,
    header: sw.header,
    userMetadata: sw.userMetadata,
    priority: sw.priority,
  });
  // ALLOW_ALL runs may overlap anything, so they take no part in the result chain.
  if (start.overlapPolicy !== OverlapPolicy.ALLOW_ALL) {
    params.lastCompletionResult = rec.lastCompletionResult;
    params.continuedFailure = rec.continuedFailure;
  }
  // Rejecting duplicates guards scheduled starts against being taken twice; manual ones may repeat an id.
  const reuse = start.manual ? ReusePolicy.ALLOW_DUPLICATE : ReusePolicy.REJECT_DUPLICATE;
  const { run } = startWorkflow(eng, params, reuse);
  return {
    scheduleMs: start.actualMs,
    actualMs: run.startTime,
    workflowId,
    runId: run.runId,
    status: WfStatus.RUNNING,
  };
}

function openChain(eng: Engine, rec: ScheduleRecord, w: RunningWorkflow): Execution | undefined {
  const cur = eng.currentRun(rec.namespace, w.workflowId);
  return cur && cur.firstRunId === w.runId && eng.isOpen(cur) ? cur : undefined;
}

export function terminateRunning(eng: Engine, rec: ScheduleRecord, w: RunningWorkflow): void {
  const run = openChain(eng, rec, w);
  if (run) terminateRun(eng, run, 'terminated by schedule overlap policy', undefined, schedulerIdentity(rec));
}

export function cancelRunning(eng: Engine, rec: ScheduleRecord, w: RunningWorkflow): void {
  const run = openChain(eng, rec, w);
  if (run)
    requestCancelRun(eng, run, {
      identity: schedulerIdentity(rec),
      requestId: eng.newId(),
      reason: 'cancelled by schedule overlap policy',
    });
}

/** How a closed chain ended, as the scheduler's watcher reports it. */
export function closeOutcome(e: Execution): { status: number; result?: any; failure?: any } {
  const last = e.history[e.history.length - 1] ?? {};
  if (e.status === WfStatus.COMPLETED)
    return { status: e.status, result: last.workflowExecutionCompletedEventAttributes?.result };
  if (e.status === WfStatus.FAILED)
    return { status: e.status, failure: last.workflowExecutionFailedEventAttributes?.failure };
  return { status: e.status };
}
