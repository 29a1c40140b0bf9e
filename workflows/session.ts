// A conversation: the durable thread of messages, and the turn order of the
// runs that continue it. Runs of one session never interleave: each waits for
// its turn (FIFO), and its messages join the thread when it completes.
// Continues-as-new to keep its history bounded. It watches its active run, so
// a run terminated from outside (which never hands its turn back) does not
// hold the session: it waits for the run's close (an activity on the watch
// task queue) and hands the turn on as soon as the run closed without handing
// it back (and gives back the account slot such a run still holds); a check
// every watchMs stays as the fallback.
import {
  CancellationScope,
  condition,
  patched,
  proxyActivities,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ThreadMessage } from './types';
import { HISTORY_BUDGET, historyPastBudget } from './history-budget';
import type { Activities } from '../activities';
import type { RunState } from '../activities/runs';
import {
  busyQuery,
  clearSignal,
  enqueueSignal,
  type Handover,
  messagesQuery,
  releaseSignal,
  reserveUpdate,
  slotsWorkflowId,
  turnDoneSignal,
  watchQueueOf,
} from './definitions';

export interface SessionState {
  account: string;
  session: string;
  messages: ThreadMessage[];
  queue: string[];
  cleared?: boolean;
  /**
   * A run that holds the turn from the session's start, without a grant: the
   * gateway opens a new session with its first run in it (TaskInput.ownsTurn),
   * which saves a signal and three workflow tasks per new-session run.
   */
  active?: string;
  /**
   * With no run active or queued for this long, the session closes and returns
   * its thread (SessionResult); the next run of the session reopens it with
   * that thread (src/common/sessions/session-signals.ts). Absent (sessions opened
   * before idle close existed, or SESSION_IDLE_CLOSE_MS=0): it never closes.
   */
  idleCloseMs?: number;
  /**
   * `active` held the turn before the session was opened (TaskAdmission.lazySession): it hands
   * nothing back by signal; its close does, and the session reads its handover from it.
   */
  activeLazy?: boolean;
  /** How often the session checks that its active run still exists, ms (RUN_WATCH_MS; default 60 s). */
  watchMs?: number;
  /** The handoff agent that had the conversation when the last completed run ended; the next run starts with it. */
  agent?: string;
}

/** What a session that closed when idle returns: its thread, for the run that reopens it. */
export interface SessionResult {
  messages: ThreadMessage[];
  agent?: string;
}

const watch = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});
const io = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '10s' },
});

/** How long a reservation holds the session for a run that has not enqueued yet, ms. */
const RESERVATION_MS = 60_000;
/** Thread size kept across runs; older messages are dropped first. */
const MAX_THREAD_MESSAGES = 200;

// eslint-disable-next-line max-lines-per-function -- the session's turn loop and its signal and query handlers share the thread and queue; workflow code is held to saved histories, so it is not reshaped for length
export async function agentSession(state: SessionState): Promise<SessionResult> {
  const messages = [...state.messages];
  const queue = [...state.queue];
  let active: string | null = state.active ?? null;
  const done = new Map<string, ThreadMessage[]>();
  /** Runs whose hand-over left their messages with them (too large for the signal). */
  const byQuery = new Set<string>();
  let agent = state.agent;
  /** The run holding the turn from before the session opened (SessionState.activeLazy), until its turn is back. */
  let lazy = state.activeLazy === true && active !== null;
  /** That run asked for its turn again (rewound before the session saw it close). */
  let rejoined = false;

  let reserved: { taskId: string; at: number } | undefined;
  const enqueue = (taskId: string) => {
    if (reserved?.taskId === taskId) reserved = undefined;
    if (lazy && active === taskId) rejoined = true;
    if (active !== taskId && !queue.includes(taskId)) queue.push(taskId);
  };
  const heldByAnother = (taskId: string) =>
    reserved !== undefined && reserved.taskId !== taskId && Date.now() - reserved.at < RESERVATION_MS;
  setHandler(enqueueSignal, ({ taskId }) => enqueue(taskId));
  setHandler(turnDoneSignal, ({ taskId, messages: added, agent: after, byQuery: large }) => {
    if (taskId === active) done.set(taskId, added);
    if (taskId === active && large) byQuery.add(taskId);
    if (taskId === active && after !== undefined) agent = after ?? undefined;
    const i = queue.indexOf(taskId);
    if (i >= 0) queue.splice(i, 1); // finished (e.g. cancelled) before its turn
  });
  setHandler(clearSignal, () => void messages.splice(0));
  setHandler(messagesQuery, () => messages);
  setHandler(busyQuery, () => ({ active, queued: [...queue] }));
  setHandler(
    reserveUpdate,
    ({ taskId }) => {
      reserved = { taskId, at: Date.now() };
      return { position: queue.length + (active ? 1 : 0) };
    },
    {
      validator: ({ taskId, reject }) => {
        if (reject && ((active && active !== taskId) || queue.some((t) => t !== taskId) || heldByAnother(taskId))) {
          throw new Error('session is busy with another run');
        }
      },
    },
  );

  for (;;) {
    // Only the first pass may find a run already holding the turn (state.active).
    let granted = true;
    if (active === null) {
      if (state.idleCloseMs) {
        await condition(() => queue.length > 0 || historyTooLong(), state.idleCloseMs);
        // Checked here, not from condition's answer: a run that enqueued in the very task where
        // the timer fired keeps the session open. One that arrives after the close reopens it.
        if (queue.length === 0 && !historyTooLong()) return { messages, ...(agent && { agent }) };
      } else {
        await condition(() => queue.length > 0 || historyTooLong());
      }
      if (queue.length === 0) break;
      active = queue.shift()!;
      granted = await getExternalWorkflowHandle(active)
        .signal('turnGranted', { messages: messages.length, session: state.session, ...(agent && { agent }) })
        .then(
          () => true,
          () => false, // the run is gone (terminated or expired): give the turn to the next
        );
    }
    const taskId: string = active;
    const watchMs = state.watchMs ?? DEFAULT_WATCH_MS;
    let closedOutside: boolean;
    if (lazy) {
      const back = await awaitLazyTurnBack(taskId, watchMs, () => rejoined);
      lazy = false; // only now: an enqueue of the run while it is awaited is its rejoin
      if (back === 'rejoined') queue.unshift(taskId); // its earlier turn is undone: it takes the turn anew
      if (typeof back === 'object') {
        done.set(taskId, back.messages);
        if (back.agent !== undefined) agent = back.agent ?? undefined;
      }
      closedOutside = back === 'outside';
    } else {
      closedOutside = granted && !(await awaitTurnBack(taskId, done, watchMs)) && patched(RELEASES_SLOT_PATCH);
    }
    if (closedOutside) {
      // Closed from outside without running its end: it never gave back its account slot either
      // (a background task's), or its place among the slot's waiters. A run without one: a no-op.
      await getExternalWorkflowHandle(slotsWorkflowId(state.account))
        .signal(releaseSignal, { taskId })
        .catch(() => undefined);
    }
    const added = byQuery.delete(taskId) ? await io.readExchange({ taskId }) : (done.get(taskId) ?? []);
    done.delete(taskId);
    messages.push(...added);
    if (messages.length > MAX_THREAD_MESSAGES) messages.splice(0, messages.length - MAX_THREAD_MESSAGES);
    active = null;
    if (historyTooLong()) break;
  }
  return continueAsNew<typeof agentSession>({
    ...state,
    active: undefined,
    activeLazy: undefined,
    messages,
    queue,
    agent,
  });
}

const DEFAULT_WATCH_MS = 60_000;

/** The wait for a run's close, on the watch task queue. */
function watchActivities() {
  return proxyActivities<Activities>({
    taskQueue: watchQueueOf(workflowInfo().taskQueue),
    // Long enough for most runs; a longer one is waited for again (each attempt a new wait).
    startToCloseTimeout: '1h',
    heartbeatTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
  });
}

/**
 * Sessions from before this patch noticed a run closed from outside only at their next check,
 * up to watchMs (a minute) later; since, they also wait for the close itself.
 */
export const AWAIT_CLOSE_PATCH = 'session-awaits-run-close';

/** Closes after which a run never hands its turn back: it did not run its own end. */
const CLOSED_FROM_OUTSIDE = new Set(['TERMINATED', 'TIMED_OUT', 'NOT_FOUND']);

/**
 * Sessions from before this patch left a run closed from outside in its account's slots until
 * the slots workflow's own check of its holders found it (watchMs, or never while the account
 * stayed busy); since, the session gives the slot back as soon as it sees the close.
 */
export const RELEASES_SLOT_PATCH = 'session-releases-slot-of-closed-run';

/**
 * Waits for the run to hand its turn back; a run that closed without doing so (terminated) gives
 * it back empty. Says whether the run handed it back itself.
 */
async function awaitTurnBack(taskId: string, done: Map<string, ThreadMessage[]>, watchMs: number): Promise<boolean> {
  let outside = false;
  const closes = new CancellationScope();
  if (patched(AWAIT_CLOSE_PATCH)) {
    const { awaitRunClose } = watchActivities();
    // A run that ends on its own hands the turn back before it closes: only a close from outside decides here.
    void closes
      .run(() => awaitRunClose({ workflowId: taskId }))
      .then(
        (r: RunState) => void (outside = CLOSED_FROM_OUTSIDE.has(r.status)),
        () => undefined,
      );
  }
  while (!(await condition(() => done.has(taskId) || outside, watchMs))) {
    const closed = await watch.closedRuns({ workflowIds: [taskId] });
    // Closed without handing the turn back: from outside, as the watch would have said.
    if (closed.length && !done.has(taskId)) outside = true;
  }
  const handedBack = done.has(taskId);
  if (!handedBack) done.set(taskId, []);
  // The wait is left to end on its own with the run's close (a moment after the run handed the
  // turn back): it records the close in the status cache, so status reads need not ask Temporal.
  return handedBack;
}

/**
 * The run that held the turn before the session opened: its close hands the turn back, and what it
 * handed over is read from it. 'outside': it closed without running its end (terminated, gone);
 * 'rejoined': it asked for the turn again before its close was seen (a rewind).
 */
async function awaitLazyTurnBack(
  taskId: string,
  watchMs: number,
  rejoined: () => boolean,
): Promise<Handover | 'outside' | 'rejoined'> {
  let closed: RunState | undefined;
  void watchActivities()
    .awaitRunClose({ workflowId: taskId })
    .then(
      (r) => void (closed = r),
      () => undefined,
    );
  while (!(await condition(() => closed !== undefined || rejoined(), watchMs))) {
    const now = await watch.runState({ workflowId: taskId });
    if (now.status !== 'RUNNING') closed = now;
  }
  if (rejoined()) return 'rejoined';
  if (CLOSED_FROM_OUTSIDE.has(closed!.status)) return 'outside';
  return (await io.readHandover({ taskId })) ?? { messages: [] };
}

function historyTooLong(): boolean {
  return historyPastBudget(HISTORY_BUDGET.events);
}
