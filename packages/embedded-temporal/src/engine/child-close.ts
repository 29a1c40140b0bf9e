// What a run's close means to the runs around it: its parent hears of it (a child's close event)
// and its children get its parent close policy. A run terminated by a reset does neither, as on
// the real server: its reset run carries on with the children it had before the reset point and
// reports to the parent when it closes itself. So a child that closes after its parent was reset
// reports to the reset run, found by following the reset links from the run that started it.
import type { Engine } from './engine';
import type { Execution } from './state';
import { EventType, ParentClosePolicy, WfStatus } from '../proto';
import { scheduleWorkflowTask } from './workflow-tasks';
import { requestCancelRun } from './signals';
import { terminateRun } from './lifecycle';
import { HISTORY_SERVICE_IDENTITY as HISTORY_SERVICE } from './limits';

/** Who the real server says terminated the run a reset replaced. */
export const RESETTER_IDENTITY = 'history-resetter';

/** The real server's bound on the reset links it follows to find a child's parent. */
const MAX_RESET_HOPS = 100;

const CHILD_CLOSE: Record<number, [number, string]> = {
  [WfStatus.COMPLETED]: [
    EventType.CHILD_WORKFLOW_EXECUTION_COMPLETED,
    'childWorkflowExecutionCompletedEventAttributes',
  ],
  [WfStatus.FAILED]: [EventType.CHILD_WORKFLOW_EXECUTION_FAILED, 'childWorkflowExecutionFailedEventAttributes'],
  [WfStatus.CANCELED]: [EventType.CHILD_WORKFLOW_EXECUTION_CANCELED, 'childWorkflowExecutionCanceledEventAttributes'],
  [WfStatus.TIMED_OUT]: [EventType.CHILD_WORKFLOW_EXECUTION_TIMED_OUT, 'childWorkflowExecutionTimedOutEventAttributes'],
  [WfStatus.TERMINATED]: [
    EventType.CHILD_WORKFLOW_EXECUTION_TERMINATED,
    'childWorkflowExecutionTerminatedEventAttributes',
  ],
};

/** Whether the run was just terminated by a reset (its close event is the last one written). */
export function terminatedByReset(e: Execution): boolean {
  if (e.status !== WfStatus.TERMINATED) return false;
  const last = e.history[e.history.length - 1];
  return last?.workflowExecutionTerminatedEventAttributes?.identity === RESETTER_IDENTITY;
}

/** Close hook: tell the parent its child finished, and apply this run's parent close policy. */
export function onRunClosed(eng: Engine, e: Execution): void {
  const byReset = terminatedByReset(e);
  if (!e.newRunId && e.parent && !byReset) {
    const parentKey = eng.key({
      namespace: e.parent.namespace,
      workflowId: e.parent.workflowId,
      runId: e.parent.runId,
    } as Execution);
    const childKey = eng.key(e);
    const initiatedEventId = e.parent.initiatedEventId;
    queueMicrotask(() => notifyParent(eng, parentKey, childKey, initiatedEventId));
  }
  // The reset run took over the children started before the reset point.
  if (byReset && e.resetRunId) return;
  for (const child of Object.values(e.children)) {
    if (!child.runId || child.parentClosePolicy === ParentClosePolicy.ABANDON) continue;
    // The child's chain, wherever it has got to (retries, continue-as-new, cron), but
    // not an unrelated later workflow that reuses its id.
    const run = eng.currentRun(child.namespace, child.workflowId);
    if (!run || !eng.isOpen(run) || run.firstRunId !== child.runId) continue;
    const parentExecution = { namespace: e.namespace, workflowId: e.workflowId, runId: e.runId };
    if (child.parentClosePolicy === ParentClosePolicy.REQUEST_CANCEL) {
      requestCancelRun(eng, run, { identity: HISTORY_SERVICE, external: parentExecution });
    } else terminateRun(eng, run, 'by parent close policy', undefined, HISTORY_SERVICE);
  }
}

/** The open run that started the child and waits for it: the parent, or the run a reset of it made. */
function waitingParent(eng: Engine, parentKey: string, initiatedEventId: number): Execution | undefined {
  let parent = eng.byKey(parentKey);
  for (let hops = 0; parent && !eng.isOpen(parent) && parent.resetRunId && hops < MAX_RESET_HOPS; hops++) {
    parent = eng.byKey(eng.key({ ...parent, runId: parent.resetRunId }));
  }
  return parent && eng.isOpen(parent) && parent.children[initiatedEventId] ? parent : undefined;
}

function notifyParent(eng: Engine, parentKey: string, childKey: string, initiatedEventId: number): void {
  const parent = waitingParent(eng, parentKey, initiatedEventId);
  const child = eng.byKey(childKey);
  if (!parent || !child) return;
  delete parent.children[initiatedEventId];
  const [type, attr] = CHILD_CLOSE[child.status];
  const close = child.history[child.history.length - 1] ?? {};
  const started = parent.history.find(
    (h) =>
      h.eventType === EventType.CHILD_WORKFLOW_EXECUTION_STARTED &&
      h.childWorkflowExecutionStartedEventAttributes?.initiatedEventId === initiatedEventId,
  );
  const ns = eng.namespace(child.namespace);
  const common = {
    namespace: ns.name,
    namespaceId: ns.id,
    workflowExecution: { workflowId: child.workflowId, runId: child.runId },
    workflowType: { name: child.workflowType },
    initiatedEventId,
    startedEventId: started?.eventId,
  };
  const c =
    close.workflowExecutionCompletedEventAttributes ??
    close.workflowExecutionFailedEventAttributes ??
    close.workflowExecutionCanceledEventAttributes ??
    close.workflowExecutionTimedOutEventAttributes ??
    close.workflowExecutionTerminatedEventAttributes ??
    {};
  eng.addWorkflowEvent(
    parent,
    eng.event(type, attr, {
      ...common,
      result: c.result,
      failure: c.failure,
      details: c.details,
      retryState: c.retryState,
    }),
  );
  scheduleWorkflowTask(eng, parent);
  void eng.flush().catch((err) => eng.logger.error({ err }, 'flush after child close failed'));
}
