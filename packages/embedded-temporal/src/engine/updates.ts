// Workflow updates: admitted requests ride to the worker as protocol messages on
// a workflow task; acceptance and completion come back as messages plus
// ProtocolMessage commands and are written as Update Accepted/Completed events.
import type { Engine } from './engine';
import type { Execution } from './state';
import { EventType, UpdateStage, decode, toAny } from '../proto';
import { notFound, workflowCompleted, invalidArgument } from '../errors';
import { scheduleWorkflowTask } from './workflow-tasks';

const REQ = 'temporal.api.update.v1.Request';

export interface PendingUpdate {
  id: string;
  request: any;
  stage: number;
  deliveredTo?: number;
  acceptedEventId?: number;
  outcome?: object;
  waiters: Set<() => void>;
  /** Its UpdateAdmitted event (a reset reapplied it): the worker reads the request there, not in a message. */
  admittedEventId?: number;
}

function notifyAll(u: PendingUpdate): void {
  const ws = [...u.waiters];
  u.waiters.clear();
  ws.forEach((w) => w());
}

/** Outcome from history for an update that completed (survives restarts). */
function fromHistory(
  e: Execution,
  updateId: string,
): { stage: number; outcome?: object; acceptedEventId?: number } | undefined {
  let accepted: number | undefined;
  for (const ev of e.history) {
    if (
      ev.eventType === EventType.WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
      ev.workflowExecutionUpdateAcceptedEventAttributes?.protocolInstanceId === updateId
    )
      accepted = ev.eventId;
    if (
      ev.eventType === EventType.WORKFLOW_EXECUTION_UPDATE_COMPLETED &&
      ev.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId === updateId
    ) {
      return {
        stage: UpdateStage.COMPLETED,
        outcome: ev.workflowExecutionUpdateCompletedEventAttributes.outcome,
        acceptedEventId: accepted,
      };
    }
  }
  return accepted ? { stage: UpdateStage.ACCEPTED, acceptedEventId: accepted } : undefined;
}

export function admitUpdate(eng: Engine, e: Execution, request: any): PendingUpdate {
  // The real frontend names an update that comes without an id.
  if (request?.meta && !request.meta.updateId) request.meta.updateId = eng.newId();
  const updateId: string = request?.meta?.updateId;
  if (!updateId) throw invalidArgument('Update meta is not set on request.');
  if (!request?.input?.name) throw invalidArgument('Update name is not set on request.');
  const side = eng.sideOf(e);
  const existing = side.updates.get(updateId);
  if (existing) return existing;
  const h = fromHistory(e, updateId);
  if (h) {
    const u: PendingUpdate = {
      id: updateId,
      request,
      stage: h.stage,
      outcome: h.outcome,
      acceptedEventId: h.acceptedEventId,
      waiters: new Set(),
    };
    if (h.stage !== UpdateStage.COMPLETED) side.updates.set(updateId, u);
    return u;
  }
  if (!eng.isOpen(e)) throw workflowCompleted();
  const u: PendingUpdate = { id: updateId, request, stage: UpdateStage.ADMITTED, waiters: new Set() };
  side.updates.set(updateId, u);
  eng.hold(e, `update:${updateId}`);
  scheduleWorkflowTask(eng, e);
  return u;
}

/**
 * An update a reset reapplied to its new run, as an UpdateAdmitted event. As on the real server,
 * no message carries it: the worker finds the request in that event and accepts or rejects it in
 * the task that shows the event.
 */
export function admitFromEvent(eng: Engine, e: Execution, request: any, admittedEventId: number): void {
  const id: string | undefined = request?.meta?.updateId;
  const side = eng.sideOf(e);
  if (!id || side.updates.has(id)) return;
  side.updates.set(id, { id, request, stage: UpdateStage.ADMITTED, admittedEventId, waiters: new Set() });
  eng.hold(e, `update:${id}`);
}

/** After a restart: the admitted updates of a reset run that no completed workflow task has shown a worker yet. */
export function recoverAdmittedUpdates(eng: Engine, e: Execution): void {
  const admitted = new Map<string, { request: any; eventId: number }>();
  for (const ev of e.history) {
    if (ev.eventType === EventType.WORKFLOW_EXECUTION_UPDATE_ADMITTED) {
      const request = ev.workflowExecutionUpdateAdmittedEventAttributes?.request;
      if (request?.meta?.updateId) admitted.set(request.meta.updateId, { request, eventId: ev.eventId });
    } else if (ev.eventType === EventType.WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      admitted.delete(ev.workflowExecutionUpdateAcceptedEventAttributes?.protocolInstanceId);
    }
  }
  for (const { request, eventId } of admitted.values()) {
    // One a worker has seen and not accepted was rejected, which writes nothing.
    if (eventId < e.lastCompletedWftStartedEventId) continue;
    admitFromEvent(eng, e, request, eventId);
    // The task running at the crash showed it already.
    const wft = e.wft;
    const u = eng.sideOf(e).updates.get(request.meta.updateId);
    if (u && wft?.startedEventId !== undefined && eventId < wft.startedEventId) u.deliveredTo = wft.scheduledEventId;
  }
}

/** The update's final outcome when it completed on this run (it is in the history), else undefined. */
export function completedUpdate(e: Execution, updateId: string): PendingUpdate | undefined {
  const h = fromHistory(e, updateId);
  if (h?.stage !== UpdateStage.COMPLETED) return undefined;
  return {
    id: updateId,
    request: undefined,
    stage: h.stage,
    outcome: h.outcome,
    acceptedEventId: h.acceptedEventId,
    waiters: new Set(),
  };
}

/** An update this run has admitted and not finished yet. */
export function pendingUpdate(eng: Engine, e: Execution, updateId: string): PendingUpdate | undefined {
  return eng.side.get(eng.key(e))?.updates.get(updateId);
}

export function findUpdate(eng: Engine, e: Execution, updateId: string): PendingUpdate {
  const u = eng.side.get(eng.key(e))?.updates.get(updateId);
  if (u) return u;
  const h = fromHistory(e, updateId);
  if (!h) throw notFound(`update ${updateId} not found`);
  return { id: updateId, request: undefined, stage: h.stage, outcome: h.outcome, waiters: new Set() };
}

/** Waits until the update reaches `stage` (or is rejected/closed) or `timeoutMs` passes. */
export function waitForStage(u: PendingUpdate, stage: number, timeoutMs: number): Promise<void> {
  if (u.stage >= stage || timeoutMs <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      u.waiters.delete(check);
      resolve();
    }, timeoutMs);
    const check = () => {
      if (u.stage >= stage) {
        clearTimeout(timer);
        resolve();
      } else u.waiters.add(check);
    };
    u.waiters.add(check);
  });
}

export function updatesWaitingForTask(eng: Engine, e: Execution): boolean {
  const side = eng.side.get(eng.key(e));
  if (!side) return false;
  for (const u of side.updates.values())
    if (u.stage === UpdateStage.ADMITTED && u.deliveredTo === undefined) return true;
  return false;
}

export function attachUpdates(
  eng: Engine,
  e: Execution,
  scheduledEventId: number,
  startedEventId: number,
): object[] | undefined {
  const side = eng.side.get(eng.key(e));
  if (!side || side.updates.size === 0) return undefined;
  const out: object[] = [];
  for (const u of side.updates.values()) {
    if (u.stage !== UpdateStage.ADMITTED || u.deliveredTo !== undefined) continue;
    u.deliveredTo = scheduledEventId;
    if (u.admittedEventId !== undefined) continue;
    out.push({
      id: `${u.id}/request`,
      protocolInstanceId: u.id,
      eventId: startedEventId - 1,
      body: toAny(REQ, u.request),
    });
  }
  return out.length ? out : undefined;
}

export function requeueUpdates(eng: Engine, e: Execution, scheduledEventId: number): void {
  eng.side.get(eng.key(e))?.updates.forEach((u) => {
    if (u.stage === UpdateStage.ADMITTED && u.deliveredTo === scheduledEventId) u.deliveredTo = undefined;
  });
}

function body(msg: any): { type: string; value: any } {
  const type = String(msg.body?.type_url ?? msg.body?.typeUrl ?? '').replace(/^type\.googleapis\.com\//, '');
  return { type, value: decode(type, msg.body?.value ?? new Uint8Array()) };
}

export function applyProtocolMessage(
  eng: Engine,
  e: Execution,
  messages: Map<string, any>,
  messageId: string,
  completedEventId: number,
): void {
  const msg = messages.get(messageId);
  if (!msg) return;
  messages.delete(messageId);
  handleMessage(eng, e, msg, completedEventId);
}

/** Messages without a command (rejections) are handled after the commands. */
export function processUpdateMessages(
  eng: Engine,
  e: Execution,
  messages: Map<string, any>,
  completedEventId: number,
  _commands: any[],
): void {
  for (const msg of messages.values()) handleMessage(eng, e, msg, completedEventId);
  messages.clear();
}

function handleMessage(eng: Engine, e: Execution, msg: any, _completedEventId: number): void {
  const side = eng.sideOf(e);
  const id: string = msg.protocolInstanceId;
  const u = side.updates.get(id);
  const { type, value } = body(msg);
  const T = eng.logger;
  if (type === 'temporal.api.update.v1.Acceptance') {
    const acceptedEventId = eng.appendEvent(
      e,
      eng.event(EventType.WORKFLOW_EXECUTION_UPDATE_ACCEPTED, 'workflowExecutionUpdateAcceptedEventAttributes', {
        protocolInstanceId: id,
        acceptedRequestMessageId: value.acceptedRequestMessageId,
        acceptedRequestSequencingEventId: value.acceptedRequestSequencingEventId,
        // An update admitted by an event has its request there, and the real server leaves it out here.
        acceptedRequest: u?.admittedEventId !== undefined ? undefined : (value.acceptedRequest ?? u?.request),
      }),
    );
    if (u) {
      u.stage = UpdateStage.ACCEPTED;
      u.acceptedEventId = acceptedEventId;
      notifyAll(u);
    }
  } else if (type === 'temporal.api.update.v1.Response') {
    eng.appendEvent(
      e,
      eng.event(EventType.WORKFLOW_EXECUTION_UPDATE_COMPLETED, 'workflowExecutionUpdateCompletedEventAttributes', {
        meta: value.meta,
        acceptedEventId: u?.acceptedEventId ?? fromHistory(e, id)?.acceptedEventId,
        outcome: value.outcome,
      }),
    );
    if (u) finishUpdate(eng, e, u, value.outcome);
  } else if (type === 'temporal.api.update.v1.Rejection') {
    if (u) finishUpdate(eng, e, u, { failure: value.failure });
  } else {
    T.warn({ type }, 'unknown protocol message ignored');
  }
}

function finishUpdate(eng: Engine, e: Execution, u: PendingUpdate, outcome: object): void {
  u.stage = UpdateStage.COMPLETED;
  u.outcome = outcome;
  eng.side.get(eng.key(e))?.updates.delete(u.id);
  eng.release(e, `update:${u.id}`);
  notifyAll(u);
}

/** The run closed: updates that never completed end with an error for their callers. */
export function abandonUpdates(eng: Engine, e: Execution): void {
  const side = eng.side.get(eng.key(e));
  if (!side) return;
  for (const u of side.updates.values()) {
    u.stage = UpdateStage.COMPLETED;
    u.outcome = {
      failure: {
        message: 'Workflow Update failed because the Workflow completed before the Update completed.',
        source: 'Server',
        applicationFailureInfo: { type: 'AcceptedUpdateCompletedWorkflow', nonRetryable: true },
      },
    };
    notifyAll(u);
  }
  side.updates.clear();
}
