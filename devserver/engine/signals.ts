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
  external?: { workflowId: string; runId: string; namespace: string };
}

/** Returns false when the request id was seen before (a retried request). */
export function signalRun(eng: Engine, e: Execution, s: SignalInput): boolean {
  if (!eng.isOpen(e)) throw workflowCompleted();
  if (s.requestId && e.requestIds.includes(s.requestId)) return false;
  if (s.requestId) e.requestIds.push(s.requestId);
  eng.addWorkflowEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
      signalName: s.signalName,
      input: s.input,
      identity: s.identity,
      header: s.header,
      requestId: s.requestId,
      externalWorkflowExecution: s.external ? { workflowId: s.external.workflowId, runId: s.external.runId } : undefined,
    }),
  );
  scheduleWorkflowTask(eng, e);
  return true;
}

export interface CancelInput {
  identity?: string;
  requestId?: string;
  reason?: string;
  external?: { workflowId: string; runId: string; namespace: string; initiatedEventId: number };
}

export function requestCancelRun(eng: Engine, e: Execution, c: CancelInput): void {
  if (!eng.isOpen(e)) throw workflowCompleted();
  // Repeat-safe: a second request (same or new id) changes nothing.
  if (e.cancelRequested) return;
  e.cancelRequested = true;
  if (c.requestId) e.requestIds.push(c.requestId);
  eng.addWorkflowEvent(
    e,
    eng.event(EventType.WORKFLOW_EXECUTION_CANCEL_REQUESTED, 'workflowExecutionCancelRequestedEventAttributes', {
      cause: c.reason,
      identity: c.identity,
      externalInitiatedEventId: c.external?.initiatedEventId,
      externalWorkflowExecution: c.external ? { workflowId: c.external.workflowId, runId: c.external.runId } : undefined,
    }),
  );
  scheduleWorkflowTask(eng, e);
}
