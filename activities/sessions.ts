// Joining a session's turn order on a run's behalf, creating the session or
// reopening it (when it closed while idle) as needed; also the fallback that
// creates an account's slots workflow when a run finds it missing.
import type { ActivityDeps } from './index';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ThreadMessage } from '../workflows/types';
import { sessionRef, signalSession } from '../src/common/sessions/session-signals';
import { handoverOf } from '../src/common/sessions/lazy-sessions';
import {
  acquireSignal,
  enqueueSignal,
  exchangeQuery,
  type Handover,
  SLOTS_TASK_TIMEOUT,
  slotsWorkflowId,
  turnDoneSignal,
} from '../workflows/definitions';

export function createSessionActivities(deps: ActivityDeps) {
  const ref = (input: { account: string; session: string }) => sessionRef(deps.config, input.account, input.session);
  return {
    async joinSession(input: { taskId: string; account: string; session: string }): Promise<void> {
      await signalSession(deps.temporal, ref(input), enqueueSignal, [{ taskId: input.taskId }], {
        caller: input.taskId,
      });
    },

    /**
     * Hands a run's turn back to a session that does not exist yet (see
     * TaskInput.ownsTurn): the session starts with the run holding the turn
     * and at once takes its messages into the thread.
     */
    async finishTurn(input: {
      taskId: string;
      account: string;
      session: string;
      messages: ThreadMessage[];
      agent?: string | null;
    }): Promise<void> {
      const done = {
        taskId: input.taskId,
        messages: input.messages,
        ...(input.agent !== undefined && { agent: input.agent }),
      };
      await signalSession(deps.temporal, ref(input), turnDoneSignal, [done], { active: input.taskId });
    },

    /** What a completed run adds to its session's thread, read from the run (too large for its hand-over signal); nothing when the run is gone. */
    async readExchange(input: { taskId: string }): Promise<ThreadMessage[]> {
      try {
        return await deps.temporal.workflow.getHandle(input.taskId).query(exchangeQuery);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return [];
        throw err;
      }
    },

    /**
     * What a closed run handed its session (handoverQuery): the first run of a session opened after
     * it began (TaskAdmission.lazySession). Null when the run is gone or never ended on its own.
     */
    readHandover: (input: { taskId: string }): Promise<Handover | null> => handoverOf(deps.temporal, input.taskId),

    /** Queues the task for one of its account's running slots (creating the account's slots workflow). */
    async requestSlot(input: { taskId: string; account: string; limit: number; createdAt: string }): Promise<void> {
      await deps.temporal.workflow.signalWithStart('accountSlots', {
        workflowId: slotsWorkflowId(input.account),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowTaskTimeout: SLOTS_TASK_TIMEOUT,
        args: [
          { account: input.account, limit: input.limit, watchMs: deps.config.RUN_WATCH_MS, holders: {}, waiting: [] },
        ],
        signal: acquireSignal,
        signalArgs: [{ taskId: input.taskId, limit: input.limit, createdAt: input.createdAt }],
      });
    },
  };
}
