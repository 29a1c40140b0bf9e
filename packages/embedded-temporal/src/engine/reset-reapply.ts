// What a reset carries into its new run from after the reset point, as the real server does:
// the signals and updates the base run (and the runs it continued as new into) received later,
// unless the request excludes them, and what became of the children it had started before the
// point (they are still its children). Then the request's own post-reset signals.
import type { Engine } from './engine';
import type { Execution, HistoryEvent, Payloads } from './state';
import { EventType, ResetReapplyExcludeType, ResetReapplyType } from '../proto';
import { RpcError, invalidArgument } from '../errors';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { admitFromEvent } from './updates';

/** A post-reset operation's signal (PostResetOperation.SignalWorkflow). */
export interface PostResetSignal {
  signalName: string;
  input?: Payloads;
  header?: object;
  links?: object[];
}

const UPDATE_ORIGIN_REAPPLY = 1;

/** The event types the request keeps out: its exclude list, and what the deprecated reapply type leaves out. */
export function excludedReapplyTypes(req: any): Set<number> {
  const type: number = req.resetReapplyType ?? ResetReapplyType.UNSPECIFIED;
  if (!Object.values(ResetReapplyType).includes(type)) throw invalidArgument(`unknown reset reapply type: ${type}`);
  const out = new Set<number>(req.resetReapplyExcludeTypes ?? []);
  if (type === ResetReapplyType.SIGNAL) out.add(ResetReapplyExcludeType.UPDATE);
  if (type === ResetReapplyType.NONE) {
    out.add(ResetReapplyExcludeType.SIGNAL);
    out.add(ResetReapplyExcludeType.UPDATE);
  }
  return out;
}

/** The request's post-reset operations, all signals: the workflow options one is not served here. */
export function postResetSignals(ops: any[]): PostResetSignal[] {
  return ops.map((op) => {
    if (op?.signalWorkflow) {
      if (!op.signalWorkflow.signalName) throw invalidArgument('SignalName is not set on request.');
      return op.signalWorkflow;
    }
    if (op?.updateWorkflowOptions) {
      throw new RpcError(
        GrpcStatus.UNIMPLEMENTED,
        'post reset operation UpdateWorkflowOptions is not implemented by the embedded Temporal dev server',
      );
    }
    throw invalidArgument('unsupported post reset operation: <nil>');
  });
}

/** Excluding every kind there is leaves nothing to reapply, not even the children's events (the real server's rule). */
function excludesAll(excluded: Set<number>): boolean {
  return Object.values(ResetReapplyExcludeType).every(
    (t) => t === ResetReapplyExcludeType.UNSPECIFIED || excluded.has(t),
  );
}

/** Reapplies to the reset run what `events` (from after the reset point) hold that it must see again. */
export function reapplyEvents(eng: Engine, run: Execution, events: HistoryEvent[], excluded: Set<number>): void {
  if (excludesAll(excluded)) return;
  const signals = !excluded.has(ResetReapplyExcludeType.SIGNAL);
  const updates = !excluded.has(ResetReapplyExcludeType.UPDATE);
  for (const ev of events) {
    switch (ev.eventType) {
      case EventType.WORKFLOW_EXECUTION_SIGNALED:
        if (signals) reapplySignal(eng, run, ev);
        break;
      case EventType.WORKFLOW_EXECUTION_UPDATE_ADMITTED: {
        const a = ev.workflowExecutionUpdateAdmittedEventAttributes ?? {};
        if (updates) reapplyUpdate(eng, run, a.request, a.origin);
        break;
      }
      case EventType.WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
        // Without its request it was admitted by an event of its own, reapplied above.
        const request = ev.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
        if (updates && request) reapplyUpdate(eng, run, request, UPDATE_ORIGIN_REAPPLY);
        break;
      }
      default:
        if (CHILD_EVENTS.has(ev.eventType)) reapplyChildEvent(eng, run, ev);
    }
  }
}

/** The post-reset signals, in order, from the reset's caller (what the pending upstream support writes). */
export function applyPostResetSignals(
  eng: Engine,
  run: Execution,
  signals: PostResetSignal[],
  identity: string | undefined,
): void {
  for (const s of signals) {
    const ev = eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
      signalName: s.signalName,
      input: s.input,
      header: s.header,
      identity,
    });
    if (s.links?.length) ev.links = s.links;
    eng.appendEvent(run, ev);
  }
}

function reapplySignal(eng: Engine, run: Execution, original: HistoryEvent): void {
  const a = original.workflowExecutionSignaledEventAttributes ?? {};
  const ev = eng.event(EventType.WORKFLOW_EXECUTION_SIGNALED, 'workflowExecutionSignaledEventAttributes', {
    signalName: a.signalName,
    input: a.input,
    identity: a.identity,
    header: a.header,
    requestId: a.requestId,
  });
  if (original.links?.length) ev.links = original.links;
  eng.appendEvent(run, ev);
  if (a.requestId) run.requestIds.push(a.requestId);
}

/** An update goes to the new run as admitted: its worker runs it again, from the event. */
function reapplyUpdate(eng: Engine, run: Execution, request: any, origin: number | undefined): void {
  const id = eng.appendEvent(
    run,
    eng.event(EventType.WORKFLOW_EXECUTION_UPDATE_ADMITTED, 'workflowExecutionUpdateAdmittedEventAttributes', {
      request,
      origin,
    }),
  );
  admitFromEvent(eng, run, request, id);
}

const CHILD_CLOSE_EVENTS = new Set([
  EventType.CHILD_WORKFLOW_EXECUTION_COMPLETED,
  EventType.CHILD_WORKFLOW_EXECUTION_FAILED,
  EventType.CHILD_WORKFLOW_EXECUTION_CANCELED,
  EventType.CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
  EventType.CHILD_WORKFLOW_EXECUTION_TERMINATED,
]);

const CHILD_EVENTS = new Set([
  EventType.CHILD_WORKFLOW_EXECUTION_STARTED,
  EventType.START_CHILD_WORKFLOW_EXECUTION_FAILED,
  ...CHILD_CLOSE_EVENTS,
]);

/** A child the reset run still has (started before the reset point) started, failed to start or closed later. */
function reapplyChildEvent(eng: Engine, run: Execution, original: HistoryEvent): void {
  const attrName = Object.keys(original).find((k) => k.endsWith('EventAttributes'))!;
  const a = original[attrName] ?? {};
  const initiatedEventId = Number(a.initiatedEventId);
  const child = run.children[initiatedEventId];
  if (!child) return;
  const started = original.eventType === EventType.CHILD_WORKFLOW_EXECUTION_STARTED;
  if (started && child.runId) return;
  if (started) child.runId = a.workflowExecution?.runId;
  else delete run.children[initiatedEventId];
  run.pendingEffects = run.pendingEffects?.filter((x) => x.initiatedEventId !== initiatedEventId);
  // A close names the run's own started event of the child.
  const startedEventId = CHILD_CLOSE_EVENTS.has(original.eventType)
    ? run.history.find(
        (h) =>
          h.eventType === EventType.CHILD_WORKFLOW_EXECUTION_STARTED &&
          Number(h.childWorkflowExecutionStartedEventAttributes?.initiatedEventId) === initiatedEventId,
      )?.eventId
    : undefined;
  eng.appendEvent(run, eng.event(original.eventType, attrName, startedEventId ? { ...a, startedEventId } : { ...a }));
}
