// Which of some runs have closed: the session and slots workflows ask this of
// the runs holding their turn and slots, and a callback's delivery workflow of
// its task, since a run terminated from outside never says so itself. A
// session also waits for its active run's close (awaitRunClose, on the watch
// task queue), so it hands the turn on as soon as a terminated run closes.
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './index';
import { isFinished, OUTSIDE_END_ERRORS } from '../workflows/types';

/** A waiting watch heartbeats this often (its heartbeat timeout is 30 s); a cancel reaches it through a heartbeat. */
const WATCH_BEAT_MS = 5000;
/** How often a watch asks again for a run Temporal does not know yet. */
const NOT_FOUND_POLL_MS = 250;

export interface RunState {
  /** Temporal's status name of the workflow's latest run (RUNNING, COMPLETED, TERMINATED, TIMED_OUT...), NOT_FOUND when there is none. */
  status: string;
  /** When that run closed (ISO 8601), if it has. */
  closedAt?: string;
}

/** The run's state once Temporal knows it, or as it is at `until` (NOT_FOUND: it never came). */
async function knownOrGone(
  runState: (input: { workflowId: string }) => Promise<RunState>,
  input: { workflowId: string },
  until: number,
): Promise<RunState> {
  for (;;) {
    const state = await runState(input);
    if (state.status !== 'NOT_FOUND' || Date.now() >= until) return state;
    await Context.current().sleep(NOT_FOUND_POLL_MS);
  }
}

/** The state of the workflow's latest run, as Temporal describes it. */
async function describeRun(deps: ActivityDeps, input: { workflowId: string }): Promise<RunState> {
  try {
    const d = await deps.temporal.workflow.getHandle(input.workflowId).describe();
    return { status: d.status.name, ...(d.closeTime && { closedAt: d.closeTime.toISOString() }) };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
    throw err;
  }
}

/**
 * The closed run's status in the cache as Temporal recorded it, so status reads need not ask
 * Temporal: a run's own end (cached by it just before the close) marked recorded; a close
 * from outside (terminated, timed out, gone) as that failure.
 */
async function recordClose(deps: ActivityDeps, taskId: string, state: RunState): Promise<void> {
  const cached = await deps.statusCache.getRecorded(taskId).catch(() => undefined);
  if (!cached || cached.recorded) return;
  const outside = OUTSIDE_END_ERRORS[state.status as keyof typeof OUTSIDE_END_ERRORS];
  if (outside) {
    await deps.statusCache.put(
      {
        ...cached.view,
        status: 'failed',
        error: { ...outside },
        completed_at: state.closedAt ?? new Date().toISOString(),
      },
      { recorded: true },
    );
  } else if (isFinished(cached.view.status)) {
    await deps.statusCache.put(cached.view, { recorded: true });
  }
}

export function createRunActivities(deps: ActivityDeps) {
  /**
   * The run's state; a close it finds is recorded in the status cache too. Whoever checks a run
   * (its session, its account's slots, its callback's deliveries) so tells status reads of a close
   * from outside, which a run whose session never opened has no watch of its own to record.
   */
  async function runState(input: { workflowId: string }): Promise<RunState> {
    const state = await describeRun(deps, input);
    // Not one Temporal does not know (yet): a run about to start must not read as vanished (awaitRunClose waits for it).
    const closed = state.status !== 'RUNNING' && state.status !== 'NOT_FOUND';
    if (closed) await recordClose(deps, input.workflowId, state).catch(() => undefined);
    return state;
  }

  /**
   * Waits until the run's latest execution closes, however it closes (continue-as-new followed), says how, and records the close in the status cache.
   * A run Temporal does not know is not closed at once: a new session is opened while the gateway
   * starts its first run, and its wait may ask first (under load it did, about one run in 300: the
   * run, still to start, was recorded `vanished` and then completed). It is gone only when Temporal
   * still does not know it RUN_WATCH_MS after the wait began (the session's own watch interval).
   */
  async function awaitRunClose(input: { workflowId: string }): Promise<RunState> {
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat(), WATCH_BEAT_MS);
    const unknownUntil = Date.now() + deps.config.RUN_WATCH_MS;
    try {
      for (let polls = 0; ; polls++) {
        const now = await knownOrGone((x) => describeRun(deps, x), input, unknownUntil);
        if (now.status !== 'RUNNING') {
          await recordClose(deps, input.workflowId, now).catch(() => undefined);
          return now;
        }
        // Still running after a poll ended: it failed (not a close), so the next waits a moment.
        if (polls > 0) await ctx.sleep(1000);
        // A long poll on the run's close event (a run that failed or was terminated ends it with an error); how it ended is read above.
        await deps.temporal.connection
          .withAbortSignal(ctx.cancellationSignal, () => deps.temporal.workflow.getHandle(input.workflowId).result())
          .catch(() => undefined);
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the watch was cancelled');
      }
    } finally {
      clearInterval(beat);
    }
  }

  return {
    runState,
    awaitRunClose,
    /** The ids among `workflowIds` whose latest run is closed, or that do not exist. */
    async closedRuns(input: { workflowIds: string[] }): Promise<string[]> {
      const states = await Promise.all(input.workflowIds.map((workflowId) => runState({ workflowId })));
      return input.workflowIds.filter((_, i) => states[i].status !== 'RUNNING');
    },
  };
}
