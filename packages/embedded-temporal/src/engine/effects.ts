// Commands that act on other runs: start child workflow, signal and cancel
// external workflows. What a run's close means to its parent and children is child-close.ts's.
// The "initiated" event is part of the workflow task's transaction; the effect
// runs right after it as its own transaction and is redone after a crash.
import type { Engine } from './engine';
import type { Execution } from './state';
import {
  EventType,
  ParentClosePolicy,
  StartChildFailedCause,
  SignalExternalFailedCause,
  CancelExternalFailedCause,
  WftFailedCause,
  msFromDur,
} from '../proto';
import { BadCommand } from './commands';
import { scheduleWorkflowTask } from './workflow-tasks';
import { paramsFromRequest, startWorkflow } from './start';
import { signalRun, requestCancelRun } from './signals';
import { typedSearchAttributes, validateSearchAttributes } from './search-attributes';
import { RpcError } from '../errors';

/** Identity the real server records on actions it takes by itself. */
const HISTORY_SERVICE = 'history-service';

export function validateStartChild(eng: Engine, e: Execution, a: any): void {
  const bad = (m: string) => new BadCommand(WftFailedCause.BAD_START_CHILD_EXECUTION_ATTRIBUTES, m);
  if (!a.workflowId) throw bad('Required field WorkflowId is not set on command.');
  if (!a.workflowType?.name) throw bad('Required field WorkflowType is not set on command.');
  if (a.namespace && a.namespace !== e.namespace && !eng.namespaces.has(a.namespace))
    throw bad(`Namespace ${a.namespace} is not found.`);
  const namespace = a.namespace || e.namespace;
  validateSearchAttributes(
    eng,
    namespace,
    a.searchAttributes?.indexedFields,
    (m) => new BadCommand(WftFailedCause.BAD_SEARCH_ATTRIBUTES, m),
  );
  // Whatever a client start would refuse (timeouts, retry policy, cron...) fails the task instead.
  try {
    paramsFromRequest(eng, { ...a, namespace, taskQueue: a.taskQueue?.name ? a.taskQueue : { name: e.taskQueue } });
  } catch (err) {
    if (err instanceof RpcError) throw bad(err.message);
    throw err;
  }
}

function pushEffect(eng: Engine, e: Execution, kind: 'child' | 'signal' | 'cancel', initiatedEventId: number): void {
  (e.pendingEffects ??= []).push({ kind, initiatedEventId });
  const key = eng.key(e);
  queueMicrotask(() => runEffect(eng, key, kind, initiatedEventId));
}

export function runEffect(eng: Engine, key: string, kind: string, initiatedEventId: number): void {
  const e = eng.byKey(key);
  if (!e) return;
  const idx = e.pendingEffects?.findIndex((x) => x.initiatedEventId === initiatedEventId) ?? -1;
  if (idx < 0) return;
  e.pendingEffects!.splice(idx, 1);
  eng.markDirty(e);
  try {
    if (kind === 'child') startChild(eng, e, initiatedEventId);
    else if (kind === 'signal') signalExternal(eng, e, initiatedEventId);
    else cancelExternal(eng, e, initiatedEventId);
  } catch (err) {
    eng.logger.error({ err, workflowId: e.workflowId, kind }, 'effect failed');
  }
  void eng.flush().catch((err) => eng.logger.error({ err }, 'flush after effect failed'));
}

export function initiateChild(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const ns = eng.namespace(a.namespace || e.namespace);
  const id = eng.appendEvent(
    e,
    eng.event(
      EventType.START_CHILD_WORKFLOW_EXECUTION_INITIATED,
      'startChildWorkflowExecutionInitiatedEventAttributes',
      {
        ...a,
        namespace: ns.name,
        namespaceId: ns.id,
        taskQueue: { name: a.taskQueue?.name || e.taskQueue, kind: 1 },
        searchAttributes: a.searchAttributes && {
          indexedFields: typedSearchAttributes(eng, ns.name, a.searchAttributes.indexedFields ?? {}),
        },
        workflowTaskCompletedEventId: completedEventId,
      },
    ),
  );
  e.children[id] = {
    initiatedEventId: id,
    namespace: ns.name,
    workflowId: a.workflowId,
    workflowType: a.workflowType.name,
    parentClosePolicy: a.parentClosePolicy || ParentClosePolicy.TERMINATE,
  };
  pushEffect(eng, e, 'child', id);
}

function startChild(eng: Engine, parent: Execution, initiatedEventId: number): void {
  const child = parent.children[initiatedEventId];
  const a = parent.history[initiatedEventId - 1]?.startChildWorkflowExecutionInitiatedEventAttributes;
  if (!child || !a || !eng.isOpen(parent)) return;
  const ns = eng.namespace(child.namespace);
  try {
    const p = paramsFromRequest(eng, { ...a, namespace: ns.name, requestId: `${parent.runId}:${initiatedEventId}` });
    p.parent = {
      namespace: parent.namespace,
      namespaceId: eng.namespace(parent.namespace).id,
      workflowId: parent.workflowId,
      runId: parent.runId,
      initiatedEventId,
    };
    p.root = parent.root ?? { workflowId: parent.workflowId, runId: parent.runId };
    const { run } = startWorkflow(eng, p, a.workflowIdReusePolicy || 0);
    child.runId = run.runId;
    eng.addWorkflowEvent(
      parent,
      eng.event(EventType.CHILD_WORKFLOW_EXECUTION_STARTED, 'childWorkflowExecutionStartedEventAttributes', {
        namespace: ns.name,
        namespaceId: ns.id,
        initiatedEventId,
        workflowExecution: { workflowId: run.workflowId, runId: run.runId },
        workflowType: { name: run.workflowType },
        header: a.header,
      }),
    );
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    delete parent.children[initiatedEventId];
    eng.addWorkflowEvent(
      parent,
      eng.event(EventType.START_CHILD_WORKFLOW_EXECUTION_FAILED, 'startChildWorkflowExecutionFailedEventAttributes', {
        namespace: ns.name,
        namespaceId: ns.id,
        workflowId: a.workflowId,
        workflowType: a.workflowType,
        cause: StartChildFailedCause.WORKFLOW_ALREADY_EXISTS,
        control: a.control,
        initiatedEventId,
        workflowTaskCompletedEventId: a.workflowTaskCompletedEventId,
      }),
    );
  }
  scheduleWorkflowTask(eng, parent);
}

export function initiateSignalExternal(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const ns = eng.namespace(a.namespace || e.namespace);
  const id = eng.appendEvent(
    e,
    eng.event(
      EventType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
      'signalExternalWorkflowExecutionInitiatedEventAttributes',
      {
        namespace: ns.name,
        namespaceId: ns.id,
        workflowExecution: a.execution,
        signalName: a.signalName,
        input: a.input,
        control: a.control,
        childWorkflowOnly: a.childWorkflowOnly,
        header: a.header,
        workflowTaskCompletedEventId: completedEventId,
      },
    ),
  );
  pushEffect(eng, e, 'signal', id);
}

/**
 * The run an external signal or cancel is aimed at: the given run, or the id's current
 * one. A childWorkflowOnly request (from a child handle) only reaches a child of the
 * requester; anything else counts as not found, as on the real server.
 */
function findTarget(
  eng: Engine,
  requester: Execution,
  namespace: string,
  execution: any,
  childOnly: boolean,
): Execution | undefined {
  if (!execution?.workflowId || !eng.namespaces.has(namespace)) return undefined;
  const run = execution.runId
    ? eng.run(eng.key({ namespace, workflowId: execution.workflowId, runId: execution.runId } as Execution))
    : eng.currentRun(namespace, execution.workflowId);
  if (!run) return undefined;
  if (childOnly && (run.parent?.workflowId !== requester.workflowId || run.parent?.runId !== requester.runId))
    return undefined;
  return run;
}

function signalExternal(eng: Engine, e: Execution, initiatedEventId: number): void {
  const a = e.history[initiatedEventId - 1]?.signalExternalWorkflowExecutionInitiatedEventAttributes;
  if (!a || !eng.isOpen(e)) return;
  const found = findTarget(eng, e, a.namespace, a.workflowExecution, !!a.childWorkflowOnly);
  const target = found && eng.isOpen(found) ? found : undefined;
  if (target) {
    signalRun(eng, target, {
      identity: HISTORY_SERVICE,
      signalName: a.signalName,
      input: a.input,
      header: a.header,
      requestId: `${e.runId}:${initiatedEventId}`,
      external: { namespace: e.namespace, workflowId: e.workflowId, runId: e.runId },
    });
    eng.addWorkflowEvent(
      e,
      eng.event(EventType.EXTERNAL_WORKFLOW_EXECUTION_SIGNALED, 'externalWorkflowExecutionSignaledEventAttributes', {
        initiatedEventId,
        namespace: a.namespace,
        namespaceId: a.namespaceId,
        // As the command named it (no run id when it gave none), like the real server.
        workflowExecution: a.workflowExecution,
        control: a.control,
      }),
    );
  } else {
    eng.addWorkflowEvent(
      e,
      eng.event(
        EventType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
        'signalExternalWorkflowExecutionFailedEventAttributes',
        {
          // The real server leaves workflowTaskCompletedEventId unset here (it is unused).
          cause: SignalExternalFailedCause.EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND,
          namespace: a.namespace,
          namespaceId: a.namespaceId,
          workflowExecution: a.workflowExecution,
          initiatedEventId,
          control: a.control,
        },
      ),
    );
  }
  scheduleWorkflowTask(eng, e);
}

export function initiateCancelExternal(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const ns = eng.namespace(a.namespace || e.namespace);
  const id = eng.appendEvent(
    e,
    eng.event(
      EventType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
      'requestCancelExternalWorkflowExecutionInitiatedEventAttributes',
      {
        workflowTaskCompletedEventId: completedEventId,
        namespace: ns.name,
        namespaceId: ns.id,
        workflowExecution: { workflowId: a.workflowId, runId: a.runId },
        control: a.control,
        childWorkflowOnly: a.childWorkflowOnly,
        reason: a.reason,
      },
    ),
  );
  pushEffect(eng, e, 'cancel', id);
}

function cancelExternal(eng: Engine, e: Execution, initiatedEventId: number): void {
  const a = e.history[initiatedEventId - 1]?.requestCancelExternalWorkflowExecutionInitiatedEventAttributes;
  if (!a || !eng.isOpen(e)) return;
  // Cancelling a run that has closed succeeds (and changes nothing).
  const target = findTarget(eng, e, a.namespace, a.workflowExecution, !!a.childWorkflowOnly);
  if (target) {
    requestCancelRun(eng, target, {
      identity: HISTORY_SERVICE,
      requestId: `${e.runId}:${initiatedEventId}`,
      reason: a.reason,
      external: { namespace: e.namespace, workflowId: e.workflowId, runId: e.runId, initiatedEventId },
    });
    eng.addWorkflowEvent(
      e,
      eng.event(
        EventType.EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
        'externalWorkflowExecutionCancelRequestedEventAttributes',
        {
          initiatedEventId,
          namespace: a.namespace,
          namespaceId: a.namespaceId,
          workflowExecution: a.workflowExecution,
        },
      ),
    );
  } else {
    eng.addWorkflowEvent(
      e,
      eng.event(
        EventType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED,
        'requestCancelExternalWorkflowExecutionFailedEventAttributes',
        {
          cause: CancelExternalFailedCause.EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND,
          namespace: a.namespace,
          namespaceId: a.namespaceId,
          workflowExecution: a.workflowExecution,
          initiatedEventId,
          control: a.control,
        },
      ),
    );
  }
  scheduleWorkflowTask(eng, e);
}

export { msFromDur };
