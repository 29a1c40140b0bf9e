// Per-account concurrency: at most `limit` background tasks of an account run
// at once; the rest wait, first in first out, without a queue limit. Holders
// give their slot back at their end; a holder that never will (its run was
// terminated from outside) is given back by its session, which watches its
// run's close, and found by a check of the holders' runs every watchMs as the
// fallback, so no slot leaks and the running tasks add nothing to their own
// histories.
import {
  condition,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import { HISTORY_BUDGET, historyPastBudget } from './history-budget';
import type { Activities } from '../activities';
import { acquireSignal, releaseSignal, SLOTS_TASK_TIMEOUT, slotsQuery } from './definitions';

export interface SlotsState {
  account: string;
  limit: number;
  /** How often the holders' runs are checked, ms (RUN_WATCH_MS; default 60 s). */
  watchMs?: number;
  /** Holders by task id (the value: when the slot was granted, ms since the epoch). */
  holders: Record<string, number>;
  /** Waiting tasks in submission order (createdAt, then id). */
  waiting: { taskId: string; createdAt: string }[];
  /** History length after which the run continues as new. Default HISTORY_BUDGET.events (tests set less). */
  maxHistoryEvents?: number;
}

const DEFAULT_WATCH_MS = 60_000;

const watch = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** What the handlers tell the loop: something changed. */
interface Marks {
  changed: boolean;
}

export async function accountSlots(initial: SlotsState): Promise<void> {
  const s: SlotsState = { ...initial, holders: { ...initial.holders }, waiting: [...initial.waiting] };
  const marks: Marks = { changed: true };
  setSlotHandlers(s, marks);
  if (patched(STEADY_CHECK_PATCH)) await steadyLoop(s, marks);
  else await earlierLoop(s, marks);
  await makeContinueAsNewFunc<typeof accountSlots>({ workflowTaskTimeout: SLOTS_TASK_TIMEOUT })(s);
}

function setSlotHandlers(s: SlotsState, marks: Marks): void {
  setHandler(acquireSignal, ({ taskId, limit, createdAt }) => {
    s.limit = limit;
    if (!(taskId in s.holders) && !s.waiting.some((w) => w.taskId === taskId)) {
      // First in, first out by submission time: a task that reached this point
      // late (its session was busy) still goes before tasks submitted after it.
      const entry = { taskId, createdAt };
      const at = s.waiting.findIndex(
        (w) => w.createdAt > createdAt || (w.createdAt === createdAt && w.taskId > taskId),
      );
      if (at < 0) s.waiting.push(entry);
      else s.waiting.splice(at, 0, entry);
    }
    marks.changed = true;
  });
  setHandler(releaseSignal, ({ taskId }) => {
    delete s.holders[taskId];
    const i = s.waiting.findIndex((w) => w.taskId === taskId);
    if (i >= 0) s.waiting.splice(i, 1);
    marks.changed = true;
  });
  setHandler(slotsQuery, () => ({
    limit: s.limit,
    running: Object.keys(s.holders),
    waiting: s.waiting.map((w) => w.taskId),
  }));
}

/**
 * Grants, then waits for a change or for the holders' scheduled check. One timer per check, kept
 * across wakes: the loop before this one started and cancelled a timer at every signal (two
 * commands, and a dozen promises the SDK traces, per wake; workflow-stack-traces.ts).
 */
async function steadyLoop(s: SlotsState, marks: Marks): Promise<void> {
  const watchMs = s.watchMs ?? DEFAULT_WATCH_MS;
  // While tasks wait, the holders are checked every few seconds (see earlierLoop's checkEvery).
  const checkEvery = () => (s.waiting.length > 0 ? Math.min(watchMs, WAITING_CHECK_MS) : watchMs);
  /** When the holders' runs were last checked, or the check's schedule began (workflow time). */
  let lastCheck = Date.now();
  /** When the pending check's timer fires; undefined: none pending. */
  let timerAt: number | undefined;
  let checkDue = false;
  const schedule = (at: number) => {
    if (timerAt !== undefined && timerAt <= at) return;
    timerAt = at;
    void sleep(at - Date.now())
      .then(() => {
        if (timerAt !== at) return; // a sooner check took its place
        timerAt = undefined;
        checkDue = true;
      })
      .catch(() => undefined); // cancelled with the run
  };
  for (;;) {
    // Reset before looking, so a signal that lands while we grant is not lost.
    marks.changed = false;
    if (s.waiting.length > 0 && Object.keys(s.holders).length < s.limit)
      await grantFree(s, () => void (marks.changed = true));
    if (historyPastBudget(s.maxHistoryEvents ?? HISTORY_BUDGET.events)) return;
    const holding = Object.keys(s.holders).length > 0;
    if (holding) {
      const at = lastCheck + checkEvery();
      if (at <= Date.now()) checkDue = true;
      else schedule(at);
    }
    if (!checkDue) await condition(() => marks.changed || checkDue);
    if (checkDue) {
      checkDue = false;
      const now = Object.keys(s.holders);
      if (now.length) await dropClosedHolders(s, now);
      lastCheck = Date.now();
    } else if (!holding && timerAt === undefined) lastCheck = Date.now(); // busy from now: its first check watchMs on
  }
}

/** The loop of slots workflows from before STEADY_CHECK_PATCH, as it ran then (their histories replay through it). */
async function earlierLoop(s: SlotsState, marks: Marks): Promise<void> {
  /** When the holders' runs were last checked, or the check's schedule began (workflow time). */
  let lastCheck = Date.now();
  const watchMs = s.watchMs ?? DEFAULT_WATCH_MS;
  /**
   * While tasks wait, the holders are checked every few seconds: a holder terminated from outside
   * whose session never opened (lazy-sessions.ts) has no session watching its close, and those
   * waiting must not wait watchMs for its slot. Idle or merely busy, the check stays at watchMs.
   */
  const checkEvery = () =>
    s.waiting.length > 0 && patched(CHECK_WHILE_WAITING_PATCH) ? Math.min(watchMs, WAITING_CHECK_MS) : watchMs;
  const changed = () => marks.changed;
  for (;;) {
    // Reset before looking, so a signal that lands while we grant is not lost.
    marks.changed = false;
    await grantFree(s, () => void (marks.changed = true));
    if (historyPastBudget(s.maxHistoryEvents ?? HISTORY_BUDGET.events)) return;
    const holding = Object.keys(s.holders);
    if (!holding.length) {
      await condition(changed);
      lastCheck = Date.now();
    } else if (patched(CHECK_ON_SCHEDULE_PATCH)) {
      // On a schedule, not after a quiet spell: a busy account (a signal every few seconds) would
      // otherwise never check, and a holder terminated from outside would keep its slot for good.
      const left = lastCheck + checkEvery() - Date.now();
      if (left <= 0 || !(await condition(changed, left))) {
        await dropClosedHolders(s, holding);
        lastCheck = Date.now();
      }
    } else if (!(await condition(changed, watchMs))) {
      await dropClosedHolders(s, holding);
    }
  }
}

/** Frees the slots of holders whose runs have closed (or are gone) without giving them back. */
async function dropClosedHolders(s: SlotsState, holding: string[]): Promise<void> {
  for (const taskId of await watch.closedRuns({ workflowIds: holding })) delete s.holders[taskId];
}

/** Slots workflows from before it checked their holders only after watchMs without a signal. */
export const CHECK_ON_SCHEDULE_PATCH = 'slots-check-holders-on-schedule';
/** Slots workflows from before it checked their holders every watchMs even while tasks waited. */
export const CHECK_WHILE_WAITING_PATCH = 'slots-check-holders-often-while-waiting';
/** Slots workflows from before one timer per scheduled check (steadyLoop); they run earlierLoop. */
export const STEADY_CHECK_PATCH = 'slots-steady-check-timer';
/** How often the holders are checked while tasks wait for a slot (at most watchMs). */
const WAITING_CHECK_MS = 5000;

/** Grants every free slot at once, in one workflow task; a task gone before its turn frees its slot again. */
async function grantFree(s: SlotsState, retry: () => void): Promise<void> {
  const batch: string[] = [];
  while (Object.keys(s.holders).length < s.limit && s.waiting.length > 0) {
    const { taskId } = s.waiting.shift()!;
    s.holders[taskId] = Date.now();
    batch.push(taskId);
  }
  const granted = await Promise.all(
    batch.map((taskId) =>
      getExternalWorkflowHandle(taskId)
        .signal('slotGranted')
        .then(
          () => true,
          () => false,
        ),
    ),
  );
  batch.forEach((taskId, i) => {
    if (granted[i]) return;
    delete s.holders[taskId];
    retry();
  });
}
