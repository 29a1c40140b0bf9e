// Joining a session's turn order: signal-with-start of the session workflow,
// so the first run of a session creates it. Also the fallbacks that create a
// session or an account's slots workflow when a run finds it missing.
import type { ActivityDeps } from './index';
import { enqueueSignal, turnDoneSignal } from '../workflows/session';
import type { ThreadMessage } from '../workflows/types';
import { sessionWorkflowId } from '../workflows/types';
import { acquireSignal, slotsWorkflowId } from '../workflows/account-slots';

export function createSessionActivities(deps: ActivityDeps) {
  return {
    async joinSession(input: { taskId: string; account: string; session: string }): Promise<void> {
      await deps.temporal.workflow.signalWithStart('agentSession', {
        workflowId: sessionWorkflowId(input.account, input.session),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ account: input.account, session: input.session, messages: [], queue: [] }],
        signal: enqueueSignal,
        signalArgs: [{ taskId: input.taskId }],
        memo: { account: input.account, session: input.session },
      });
    },

    /**
     * Hands a run's turn back to a session that does not exist yet (see
     * TaskInput.ownsTurn): the session starts with the run holding the turn
     * and at once takes its messages into the thread.
     */
    async finishTurn(input: { taskId: string; account: string; session: string; messages: ThreadMessage[] }): Promise<void> {
      await deps.temporal.workflow.signalWithStart('agentSession', {
        workflowId: sessionWorkflowId(input.account, input.session),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ account: input.account, session: input.session, messages: [], queue: [], active: input.taskId }],
        signal: turnDoneSignal,
        signalArgs: [{ taskId: input.taskId, messages: input.messages }],
        memo: { account: input.account, session: input.session },
      });
    },

    /** Queues the task for one of its account's running slots (creating the account's slots workflow). */
    async requestSlot(input: { taskId: string; account: string; limit: number; leaseMs: number; createdAt: string }): Promise<void> {
      await deps.temporal.workflow.signalWithStart('accountSlots', {
        workflowId: slotsWorkflowId(input.account),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ account: input.account, limit: input.limit, leaseMs: input.leaseMs, holders: {}, waiting: [] }],
        signal: acquireSignal,
        signalArgs: [{ taskId: input.taskId, limit: input.limit, leaseMs: input.leaseMs, createdAt: input.createdAt }],
      });
    },
  };
}
