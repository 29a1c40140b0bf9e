// Per-account concurrency: at most `limit` background tasks of an account run
// at once; the rest wait, first in first out, without a queue limit. A slot is
// a lease the holder renews; a holder that stops renewing (its workflow was
// terminated) loses the slot when the lease runs out, so nothing leaks.
import { condition, continueAsNew, defineQuery, defineSignal, getExternalWorkflowHandle, makeContinueAsNewFunc, patched, setHandler, workflowInfo } from '@temporalio/workflow';

export interface SlotsState {
  account: string;
  limit: number;
  leaseMs: number;
  holders: Record<string, number>;
  /** Waiting tasks in submission order (createdAt, then id). */
  waiting: { taskId: string; createdAt: string }[];
  /** History length after which the run continues as new. Default MAX_HISTORY_EVENTS (tests set less). */
  maxHistoryEvents?: number;
}

export const acquireSignal = defineSignal<[{ taskId: string; limit: number; leaseMs: number; createdAt: string }]>('acquire');
export const releaseSignal = defineSignal<[{ taskId: string }]>('release');
export const renewSignal = defineSignal<[{ taskId: string }]>('renew');
export const slotsQuery = defineQuery<{ limit: number; running: string[]; waiting: string[] }>('slots');

export function slotsWorkflowId(account: string): string {
  return `slots:${account}`;
}

const MAX_HISTORY_EVENTS = 2000;

/**
 * Runs before this marker granted free slots one at a time, each grant waiting
 * for its signal to be delivered (a workflow task per grant, so a burst of 50
 * tasks took 50 round trips to start). Now all the slots free at once are
 * granted together, in one workflow task. Deprecate once no slots workflow
 * older than the change can be replayed (they continue as new every 2,000
 * events).
 */
export const PARALLEL_GRANTS_PATCH = 'parallel-grants-1';

/**
 * Runs before this marker went on granting one slot at a time after each
 * batch while slots kept coming free, checking their history length only when
 * none did. Under a steady stream of short tasks that was never: one account's
 * slots workflow reached 29,000 events in a soak (6,000 one-turn tasks at 45
 * a second), its replay outgrew the workflow task timeout, and the account's
 * background tasks stayed queued for good. Now every pass grants the free
 * slots in one batch and then checks the history, and the run continues as
 * new with SLOTS_TASK_TIMEOUT, so a long replay after a burst can still finish.
 */
export const BOUNDED_GRANTS_PATCH = 'bounded-grants-2';

/**
 * Workflow task timeout of the slots workflow (the SDK's default is 10 s). A
 * continue-as-new that signals keep arriving during is refused by Temporal,
 * and the worker then replays the run from its start: under a long burst the
 * history grows until the signals pause, and that replay must fit.
 */
export const SLOTS_TASK_TIMEOUT = '60s';

export async function accountSlots(initial: SlotsState): Promise<void> {
  const s: SlotsState = { ...initial, holders: { ...initial.holders }, waiting: [...initial.waiting] };
  let changed = true;
  const now = () => Date.now();
  // Asked where the old code went on granting, so a run in flight takes the new path from here on.
  const bounded = () => patched(BOUNDED_GRANTS_PATCH);

  setHandler(acquireSignal, ({ taskId, limit, leaseMs, createdAt }) => {
    s.limit = limit;
    s.leaseMs = leaseMs;
    if (!(taskId in s.holders) && !s.waiting.some((w) => w.taskId === taskId)) {
      // First in, first out by submission time: a task that reached this point
      // late (its session was busy) still goes before tasks submitted after it.
      const entry = { taskId, createdAt };
      const at = s.waiting.findIndex((w) => w.createdAt > createdAt || (w.createdAt === createdAt && w.taskId > taskId));
      if (at < 0) s.waiting.push(entry);
      else s.waiting.splice(at, 0, entry);
    }
    changed = true;
  });
  setHandler(releaseSignal, ({ taskId }) => {
    delete s.holders[taskId];
    const i = s.waiting.findIndex((w) => w.taskId === taskId);
    if (i >= 0) s.waiting.splice(i, 1);
    changed = true;
  });
  setHandler(renewSignal, ({ taskId }) => {
    if (taskId in s.holders) s.holders[taskId] = now() + s.leaseMs;
  });
  setHandler(slotsQuery, () => ({ limit: s.limit, running: Object.keys(s.holders), waiting: s.waiting.map((w) => w.taskId) }));

  for (;;) {
    // Reset before looking, so a signal that lands while we grant is not lost.
    changed = false;
    for (const [taskId, until] of Object.entries(s.holders)) if (until <= now()) delete s.holders[taskId];
    const grant = (taskId: string) =>
      getExternalWorkflowHandle(taskId)
        .signal('slotGranted')
        .then(
          () => true,
          () => false, // gone before its turn
        );
    if (Object.keys(s.holders).length < s.limit && s.waiting.length > 0 && patched(PARALLEL_GRANTS_PATCH)) {
      const batch: string[] = [];
      while (Object.keys(s.holders).length < s.limit && s.waiting.length > 0) {
        const { taskId } = s.waiting.shift()!;
        s.holders[taskId] = now() + s.leaseMs;
        batch.push(taskId);
      }
      const granted = await Promise.all(batch.map(grant));
      batch.forEach((taskId, i) => {
        if (!granted[i]) {
          delete s.holders[taskId];
          // The slot is free again: look at the queue once more rather than wait for a signal.
          if (bounded()) changed = true;
        }
      });
    }
    // Slots freed while the batch was delivered set `changed`: the next pass grants them, after the check below.
    while (!bounded() && Object.keys(s.holders).length < s.limit && s.waiting.length > 0) {
      const { taskId } = s.waiting.shift()!;
      s.holders[taskId] = now() + s.leaseMs;
      if (!(await grant(taskId))) delete s.holders[taskId];
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > (s.maxHistoryEvents ?? MAX_HISTORY_EVENTS)) break;
    const expiries = Object.values(s.holders);
    const nextExpiry = expiries.length ? Math.max(1, Math.min(...expiries) - now()) : undefined;
    if (nextExpiry === undefined) await condition(() => changed);
    else await condition(() => changed, nextExpiry);
  }
  if (bounded()) await makeContinueAsNewFunc<typeof accountSlots>({ workflowTaskTimeout: SLOTS_TASK_TIMEOUT })(s);
  else await continueAsNew<typeof accountSlots>(s);
}
