// Joining a session's turn order: signal-with-start of the session workflow,
// so the first run of a session creates it.
import type { ActivityDeps } from './index';
import { enqueueSignal } from '../workflows/session';
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
