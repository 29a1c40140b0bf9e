// Which events of a run's history were written together. The real server writes a history in
// batches, one per transaction (a start, a task's completion, a signal...), and numbers every
// event with a task id of its own: consecutive within a batch, with a gap before the next one.
// Events here get their task ids the same way, the events a change appends before the engine's
// next flush being one batch (cut after a workflow task's started event, as there). A reset can
// only rebuild a run to the end of a batch: the real server refuses one that cuts a batch in two
// (reset.ts).
import type { HistoryEvent } from './state';
import { EventType } from '../proto';

/** Gives the event about to be appended its task id: the next one in its batch, or past a gap for a new batch. */
export function stampTaskId(history: HistoryEvent[], side: { txOpen?: boolean }, ev: HistoryEvent): void {
  const last = history.length ? Number(history[history.length - 1].taskId ?? 0) : 0;
  ev.taskId = last + (side.txOpen ? 1 : 2);
  // The real server closes the batch after every workflow task started event, whatever follows.
  side.txOpen = ev.eventType !== EventType.WORKFLOW_TASK_STARTED;
}

/**
 * Whether event `eventId` ends its batch. Runs written before task ids told batches apart have
 * each event's id as its task id: every event of theirs counts as a batch of its own.
 */
export function endsBatch(history: HistoryEvent[], eventId: number): boolean {
  const ev = history[eventId - 1];
  const next = history[eventId];
  if (!ev || !next) return true;
  const nextTaskId = Number(next.taskId ?? 0);
  const legacy = nextTaskId === Number(next.eventId);
  return legacy || nextTaskId !== Number(ev.taskId ?? 0) + 1;
}
