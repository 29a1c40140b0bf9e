// ResetWorkflowExecution: a new run of the workflow id that goes on from just before a workflow
// task of an earlier run (the base run), as the real server makes it. The new run's history is the
// base run's up to that task's started event, then the task failed with cause RESET_WORKFLOW, then
// what is reapplied from after the point (reset-reapply.ts) and the request's post-reset signals,
// then a new workflow task; its state is rebuilt from those events (reset-rebuild.ts). The current
// run of the id, if still running, is terminated; the new run becomes the current one.
import type { Engine } from './engine';
import type { Execution, HistoryEvent } from './state';
import { EventType, WfStatus, WftFailedCause } from '../proto';
import { invalidArgument } from '../errors';
import { decodeHistoryBatch, historyBatch } from './persistence';
import { endsBatch } from './history-batches';
import { RebuiltState, carriedResetPoints, rebuildState } from './reset-rebuild';
import {
  PostResetSignal,
  applyPostResetSignals,
  excludedReapplyTypes,
  postResetSignals,
  reapplyEvents,
} from './reset-reapply';
import { terminateRun } from './lifecycle';
import { RESETTER_IDENTITY } from './child-close';
import { HISTORY_SERVICE_IDENTITY } from './limits';
import { armRunTimers } from './create-run';
import { armTimer } from './timers';
import { armActivity } from './activities';
import { runEffect } from './effects';
import { scheduleWorkflowTask } from './workflow-tasks';
import { checkSignalPayload } from './payload-checks';

const FINISH_OUT_OF_RANGE = 'Workflow task finish ID must be > 1 && <= workflow last event ID.';
/** The request id the real server's rebuilt task carries into the started event a reset adds. */
const REBUILT_TASK_REQUEST_ID = 'emptyUuid';

interface ResetPlan {
  base: Execution;
  finishEventId: number;
  reason: string;
  requestId: string;
  identity?: string;
  excluded: Set<number>;
  signals: PostResetSignal[];
}

/** Resets as the request asks; returns the new run (or, for a retried request, the run it made). */
export function resetWorkflow(eng: Engine, req: any): Execution {
  return eng.atOneInstant(() => {
    // Checked first, as the real frontend does (which answers INTERNAL).
    const excluded = excludedReapplyTypes(req);
    const exec = req.workflowExecution ?? {};
    const base = eng.getRun(req.namespace, exec.workflowId, exec.runId || undefined);
    const finishEventId = Number(req.workflowTaskFinishEventId ?? 0);
    if (finishEventId <= 1 || finishEventId >= base.nextEventId) throw invalidArgument(FINISH_OUT_OF_RANGE);
    const plan: ResetPlan = {
      base,
      finishEventId,
      reason: req.reason ?? '',
      requestId: req.requestId,
      identity: req.identity || undefined,
      signals: postResetSignals(req.postResetOperations ?? []),
      excluded,
    };
    for (const s of plan.signals) {
      checkSignalPayload(eng, base.namespace, base.workflowId, s.input, 'ResetWorkflowExecution', base.runId);
    }
    // A retry of a reset that went through: its run is still the current one.
    const current = eng.currentRun(base.namespace, base.workflowId);
    if (current?.resetFrom?.requestId === plan.requestId) return current;
    return resetTo(eng, plan, current);
  });
}

function resetTo(eng: Engine, plan: ResetPlan, current: Execution | undefined): Execution {
  const { base, finishEventId } = plan;
  const lastKept = finishEventId - 1;
  const baseHistory = base.history;
  if (!endsBatch(baseHistory, lastKept)) {
    throw invalidArgument(
      `StateRebuilder unable to Rebuild mutable state to event ID: ${lastKept}, version: 0, this event must be at the boundary`,
    );
  }
  // Copies: the new run's events must not be the base run's objects.
  const kept = decodeHistoryBatch(historyBatch(baseHistory.slice(0, lastKept)));
  const rebuilt = rebuildState(base, kept, eng.now());
  if (!rebuilt.wft) {
    throw invalidArgument(
      `Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, WorkflowTaskStarted + 1]: ${finishEventId}`,
    );
  }
  const runId = eng.newId();
  base.resetRunId = runId;
  eng.markDirty(base);
  if (current && eng.isOpen(current)) terminateRun(eng, current, plan.reason, undefined, RESETTER_IDENTITY);
  const run = newRun(eng, plan, runId, kept, rebuilt);
  eng.addRun(run);
  failResetTask(eng, run, plan, rebuilt.wft);
  for (const events of laterEvents(eng, base, lastKept)) reapplyEvents(eng, run, events, plan.excluded);
  applyPostResetSignals(eng, run, plan.signals, plan.identity);
  startRun(eng, run);
  return run;
}

/** The reset run's state: the base run's settings, the rebuilt state, and the events kept. */
function newRun(eng: Engine, plan: ResetPlan, runId: string, kept: HistoryEvent[], s: RebuiltState): Execution {
  const { base } = plan;
  const now = eng.now();
  return {
    namespace: base.namespace,
    workflowId: base.workflowId,
    runId,
    firstRunId: base.firstRunId,
    workflowType: base.workflowType,
    taskQueue: base.taskQueue,
    status: WfStatus.RUNNING,
    startTime: now,
    executionTime: now,
    nextEventId: kept.length + 1,
    history: kept,
    buffered: [],
    requestIds: s.requestIds,
    startRequestId: base.startRequestId,
    runTimeoutMs: base.runTimeoutMs,
    executionTimeoutMs: base.executionTimeoutMs,
    // The real server counts the execution timeout again from the reset.
    executionExpirationTime: base.executionTimeoutMs > 0 ? now + base.executionTimeoutMs : 0,
    workflowTaskTimeoutMs: base.workflowTaskTimeoutMs,
    attempt: base.attempt,
    retryPolicy: base.retryPolicy,
    cronSchedule: base.cronSchedule,
    memo: s.memo,
    searchAttributes: s.searchAttributes,
    parent: base.parent,
    root: base.parent ? base.root : { workflowId: base.workflowId, runId },
    wftAttempt: 1,
    lastCompletedWftStartedEventId: s.lastCompletedWftStartedEventId,
    activities: s.activities,
    timers: s.timers,
    children: s.children,
    cancelRequested: s.cancelRequested,
    pendingEffects: s.pendingEffects.length ? s.pendingEffects : undefined,
    stateTransitions: 0,
    historySizeBytes: 0,
    workerVersionStamp: s.workerVersionStamp,
    resetPoints: carriedResetPoints(eng, base, runId, plan.finishEventId),
    resetFrom: {
      baseRunId: base.runId,
      requestId: plan.requestId,
      originalStartTime: base.resetFrom?.originalStartTime ?? base.startTime,
    },
  };
}

/** The workflow task open at the reset point fails, after a started event when it had none yet. */
function failResetTask(eng: Engine, run: Execution, plan: ResetPlan, wft: NonNullable<RebuiltState['wft']>): void {
  const startedEventId =
    wft.startedEventId ??
    eng.appendEvent(
      run,
      eng.event(EventType.WORKFLOW_TASK_STARTED, 'workflowTaskStartedEventAttributes', {
        scheduledEventId: wft.scheduledEventId,
        identity: HISTORY_SERVICE_IDENTITY,
        requestId: REBUILT_TASK_REQUEST_ID,
        historySizeBytes: historyBatch(run.history).length,
      }),
    );
  eng.appendEvent(
    run,
    eng.event(EventType.WORKFLOW_TASK_FAILED, 'workflowTaskFailedEventAttributes', {
      scheduledEventId: wft.scheduledEventId,
      startedEventId,
      cause: WftFailedCause.RESET_WORKFLOW,
      failure: { message: plan.reason, resetWorkflowFailureInfo: {} },
      identity: HISTORY_SERVICE_IDENTITY,
      baseRunId: plan.base.runId,
      newRunId: run.runId,
    }),
  );
}

/**
 * The events written after the reset point: the base run's (read after any termination above,
 * so with the signals it had buffered), then those of each run it continued as new into.
 */
function* laterEvents(eng: Engine, base: Execution, lastKept: number): Generator<HistoryEvent[]> {
  yield base.history.slice(lastKept);
  let run: Execution | undefined = base;
  for (let hops = 0; run?.status === WfStatus.CONTINUED_AS_NEW && run.newRunId && hops < 1000; hops++) {
    run = eng.run(eng.key({ ...run, runId: run.newRunId }));
    if (run) yield run.history;
  }
}

/** Everything the new run has pending is armed, as recovery does, and its first new task scheduled. */
function startRun(eng: Engine, run: Execution): void {
  armRunTimers(eng, run);
  for (const id of Object.keys(run.timers)) armTimer(eng, run, id);
  for (const a of Object.values(run.activities)) armActivity(eng, run, a);
  const key = eng.key(run);
  for (const eff of run.pendingEffects ?? []) {
    queueMicrotask(() => runEffect(eng, key, eff.kind, eff.initiatedEventId));
  }
  scheduleWorkflowTask(eng, run);
}
