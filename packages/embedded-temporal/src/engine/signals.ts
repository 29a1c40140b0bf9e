// Signals and cancellation requests delivered to a run, from clients or from
// other workflows.
import type { Engine } from './engine';
import type { Execution, Payloads } from './state';
import { EventType } from '../proto';
import { scheduleWorkflowTask } from './workflow-tasks';
import { workflowCompleted } from '../errors';

export interface SignalInput {
  signalName: string;
  input?: Payloads;
  identity?: string;
  header?: object;
  requestId?: string;
  links?: object[];
  external?: { workflowId: string; runId: string; namespace: string };
}

/** Returns false when the request id was seen before (a retried request). */
export function signalRun(eng: Engine, e: Execution, s: SignalInput): boolean {
  if (!eng.isOpen(e)) throw workflowCompleted();
  if (s.requestId && e.requestIds.includes(s.requestId)) return false;
  if (s.requestId) e.requestIds.push(s.requestId);
  const ev = eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
    signalName: s.signalName,
    input: s.input,
    identity: s.identity,
    header: s.header,
    requestId: s.requestId,
    externalWorkflowExecution: s.external ? { workflowId: s.external.workflowId, runId: s.external.runId } : undefined,
  });
  if (s.links?.length) ev.links = s.links;
  eng.addWorkflowEvent(e, ev);
  scheduleWorkflowTask(eng, e);
  return true;
}

export interface CancelInput {
  identity?: string;
  requestId?: string;
  reason?: string;
  // The requesting workflow: a RequestCancelExternal command (with its initiated event) or a closing parent.
  external?: { workflowId: string; runId: string; namespace: string; initiatedEventId?: number };
}

/**
 * Records a cancel request and schedules a workflow task for it, even inside a start
 * delay. Like the real server, asking a closed run, or asking twice, succeeds and
 * changes nothing.
 */
export function requestCancelRun(eng: Engine, e: Execution, c: CancelInput): void {
  if (!eng.isOpen(e) || e.cancelRequested) return;
  e.cancelRequested = true;
  eng.addWorkflowEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_CANCEL_REQUESTED, 'workflowExecutionCancelRequestedEventAttributes', {
      cause: c.reason,
      identity: c.identity,
      externalInitiatedEventId: c.external?.initiatedEventId,
      externalWorkflowExecution: c.external
        ? { workflowId: c.external.workflowId, runId: c.external.runId }
        : undefined,
    }),
  );
  scheduleWorkflowTask(eng, e, true);
}
