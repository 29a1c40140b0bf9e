// The history limits, enforced as the real history service does: before a change to
// a running run is written, a history already past `limit.historySize.error` bytes,
// or one the change takes past `limit.historyCount.error` events, makes the server
// drop the change and terminate the run instead (reason "Workflow history size/count
// exceeds limit.", identity history-service); whoever made the change gets
// INVALID_ARGUMENT with that reason. Past the warn limits it is logged, once per run.
// Every workflow task also tells the workflow its history size, and suggests
// continue-as-new past the suggest limits.
import type { Engine } from './engine';
import type { Execution, HistoryEvent } from './state';
import { EventType, SuggestCanReason, WfStatus } from '../proto';
import { RpcError, invalidArgument } from '../errors';
import { terminateRun } from './lifecycle';
import { HISTORY_COUNT_TOO_LARGE, HISTORY_SERVICE_IDENTITY, HISTORY_SIZE_TOO_LARGE } from './limits';

/**
 * Events the real server writes with an id at once. Every other kind (signals, timer
 * fired, activity outcomes...) waits in a buffer until the end of its change, unless a
 * workflow task is scheduled after it: so a change's trailing events of those kinds are
 * not yet counted when the count limit is checked.
 */
const WRITTEN_AT_ONCE = new Set(
  [
    'WORKFLOW_EXECUTION_STARTED',
    'WORKFLOW_EXECUTION_COMPLETED',
    'WORKFLOW_EXECUTION_FAILED',
    'WORKFLOW_EXECUTION_TIMED_OUT',
    'WORKFLOW_EXECUTION_TERMINATED',
    'WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
    'WORKFLOW_EXECUTION_CANCELED',
    'WORKFLOW_TASK_SCHEDULED',
    'WORKFLOW_TASK_STARTED',
    'WORKFLOW_TASK_COMPLETED',
    'WORKFLOW_TASK_FAILED',
    'WORKFLOW_TASK_TIMED_OUT',
    'ACTIVITY_TASK_SCHEDULED',
    'ACTIVITY_TASK_CANCEL_REQUESTED',
    'TIMER_STARTED',
    'TIMER_CANCELED',
    'REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
    'MARKER_RECORDED',
    'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
    'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
    'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
    'WORKFLOW_PROPERTIES_MODIFIED',
    'NEXUS_OPERATION_SCHEDULED',
    'NEXUS_OPERATION_CANCEL_REQUESTED',
    'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
    'WORKFLOW_EXECUTION_UPDATE_COMPLETED',
  ].map((name) => EventType[name]),
);

/** A run as last written, to take a change back: kept only for runs near a limit. */
interface Committed {
  state: Omit<Execution, 'history'>;
  events: number;
}

const committed = new WeakMap<Execution, Committed>();
/** Runs a limit terminated, and in which flush (so only the caller of that flush gets the error). */
const terminated = new WeakMap<Execution, { flush: number; error: RpcError }>();
const warned = new WeakMap<Execution, Set<string>>();
const flushes = new WeakMap<Engine, number>();

export function installHistoryLimits(eng: Engine): void {
  eng.beforeCommit = (dirty) => checkChangedRuns(eng, dirty);
}

function checkChangedRuns(eng: Engine, dirty: ReadonlySet<Execution>): void {
  const flush = (flushes.get(eng) ?? 0) + 1;
  flushes.set(eng, flush);
  for (const e of dirty) {
    // A change that closes the run is let through, as there; a run being created is not checked.
    const written = eng.side.get(eng.key(e))?.persistedEvents ?? 0;
    if (!eng.isOpen(e) || written === 0) {
      committed.delete(e);
      continue;
    }
    const reason = exceededLimit(eng, e, written);
    if (reason) terminateForLimit(eng, e, reason, flush);
    else remember(eng, e);
  }
}

/** The limit the run breaks with this change, if any (size first, as on the real server). */
function exceededLimit(eng: Engine, e: Execution, written: number): string | undefined {
  const l = eng.limits;
  // The size is that of the history already written; the count includes this change's events.
  const size = e.historySizeBytes;
  const count = e.nextEventId - 1 - trailingBuffered(e.history, written);
  const fields = { 'wf-namespace': e.namespace, 'wf-id': e.workflowId, 'wf-run-id': e.runId };
  if (size > l.historySizeError) {
    eng.logger.warn({ ...fields, 'wf-history-size': size }, 'history size exceeds error limit.');
    return HISTORY_SIZE_TOO_LARGE;
  }
  if (size > l.historySizeWarn)
    warnOnce(eng, e, 'history size exceeds warn limit.', { ...fields, 'wf-history-size': size });
  if (count > l.historyCountError) {
    eng.logger.warn({ ...fields, 'wf-event-count': count }, 'history count exceeds error limit.');
    return HISTORY_COUNT_TOO_LARGE;
  }
  if (count > l.historyCountWarn)
    warnOnce(eng, e, 'history count exceeds warn limit.', { ...fields, 'wf-event-count': count });
  return undefined;
}

function trailingBuffered(history: HistoryEvent[], written: number): number {
  let n = 0;
  for (let i = history.length - 1; i >= written && !WRITTEN_AT_ONCE.has(history[i].eventType); i--) n++;
  return n;
}

// The real server logs these with a throttled logger; once per run keeps a long run from flooding the log.
function warnOnce(eng: Engine, e: Execution, msg: string, fields: object): void {
  let seen = warned.get(e);
  if (!seen) warned.set(e, (seen = new Set()));
  if (seen.has(msg)) return;
  seen.add(msg);
  eng.logger.warn(fields, msg);
}

function terminateForLimit(eng: Engine, e: Execution, reason: string, flush: number): void {
  const last = committed.get(e);
  // Without a copy (a single change that jumped from far below the limit to past it)
  // the change stays and the run is terminated after it.
  if (last) restore(e, last);
  committed.delete(e);
  terminateRun(eng, e, reason, undefined, HISTORY_SERVICE_IDENTITY);
  terminated.set(e, { flush, error: invalidArgument(reason) });
}

/**
 * Keeps a copy of the run as it is about to be written, while it is within half a
 * limit of it: a single change never adds that much, and runs far below a limit cost
 * nothing. Payload bytes are shared (never changed in place).
 */
function remember(eng: Engine, e: Execution): void {
  const l = eng.limits;
  if ((e.nextEventId - 1) * 2 <= l.historyCountError && e.historySizeBytes * 2 <= l.historySizeError) {
    committed.delete(e);
    return;
  }
  const { history, ...state } = e;
  committed.set(e, { state: copy(state), events: history.length });
}

function restore(e: Execution, last: Committed): void {
  const size = e.historySizeBytes; // what is written, which the dropped change never was
  e.history.length = last.events;
  for (const k of Object.keys(e))
    if (k !== 'history' && !(k in last.state)) delete (e as unknown as Record<string, unknown>)[k];
  Object.assign(e, last.state, { historySizeBytes: size });
}

function copy<T>(v: T): T {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
  if (Array.isArray(v)) return v.map(copy) as T;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = copy(x);
  return out as T;
}

/**
 * Flushes a change to `e` and, when a history limit made that flush terminate the run
 * instead, throws the error the real server answers the change's caller with.
 */
export async function commitRun(eng: Engine, e: Execution | undefined): Promise<void> {
  const before = flushes.get(eng) ?? 0;
  const written = eng.flush(); // checks synchronously, before the write
  const hit = e ? terminated.get(e) : undefined;
  await written;
  if (hit && hit.flush > before) throw hit.error;
}

/**
 * Whether a history limit terminated the run: a task handed out in the change that
 * broke it is dropped (the poller gets an empty response), as the real server never
 * records it started.
 */
export function terminatedByLimit(e: Execution | undefined): boolean {
  return !!e && e.status !== WfStatus.RUNNING && terminated.has(e);
}

export interface HistoryHints {
  historySizeBytes: number;
  suggestContinueAsNew?: boolean;
  suggestContinueAsNewReasons?: number[];
}

/**
 * What a workflow task's started event tells the workflow about its history: the
 * written size, and continue-as-new suggested once size or count reaches its suggest
 * limit (the count is the started event's own id, as there).
 */
export function historyHints(eng: Engine, e: Execution): HistoryHints {
  const l = eng.limits;
  const reasons: number[] = [];
  if (e.historySizeBytes >= l.historySizeSuggestContinueAsNew) reasons.push(SuggestCanReason.HISTORY_SIZE_TOO_LARGE);
  if (e.nextEventId >= l.historyCountSuggestContinueAsNew) reasons.push(SuggestCanReason.TOO_MANY_HISTORY_EVENTS);
  if (!reasons.length) return { historySizeBytes: e.historySizeBytes };
  return { historySizeBytes: e.historySizeBytes, suggestContinueAsNew: true, suggestContinueAsNewReasons: reasons };
}
