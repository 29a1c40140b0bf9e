// Joining a session's turn order: signal-with-start of the session workflow,
// so the first run of a session creates it.
import type { ActivityDeps } from './index';
import { enqueueSignal } from '../workflows/session';
import { sessionWorkflowId } from '../workflows/types';

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
  };
}
