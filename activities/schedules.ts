// The I/O of a schedule's run: building its task's input with the
// deployment's settings and the account's limit as they are now.
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from './index';
import type { ScheduledRunInput } from '../workflows/scheduled-run';
import type { StoredRunRequest, TaskInput } from '../workflows/types';
import { runRequestSchema, type RunRequest } from '../src/common/contracts/run-request';
import { validationError } from '../src/common/errors';
import { AccountsRegistry } from '../src/common/accounts/registry';
import { taskInput, taskStartMeta } from '../src/common/tasks/task-input';
import { scheduledTaskId } from '../src/common/schedules/schedule-ids';

export interface PreparedTask {
  input: TaskInput;
  memo: Record<string, unknown>;
  searchAttributes: Record<string, string[]>;
}

export function createScheduleActivities(deps: ActivityDeps) {
  const registry = new AccountsRegistry(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
  return {
    // runFirstRunId is absent from a call a worker recorded before runs carried it.
    async prepareScheduledTask(
      run: ScheduledRunInput & { runWorkflowId: string; runFirstRunId?: string },
    ): Promise<PreparedTask> {
      const snapshot = await registry.snapshot();
      const input = taskInput(
        deps.config,
        { ...storedRequest(run.request), background: true },
        {
          taskId: scheduledTaskId(run.runWorkflowId, run.runFirstRunId),
          account: run.account,
          maxRunning: snapshot.accounts[run.account]?.maxRunning,
          session: run.session,
          createdAt: new Date().toISOString(),
          callback: run.callback,
          joinsSession: true,
        },
      );
      return { input, ...taskStartMeta(input, { schedule: run.scheduleId }) };
    },
  };
}

/** The stored request read with today's request schema; one it no longer takes fails the task, by name. */
export function storedRequest(stored: StoredRunRequest): RunRequest {
  const parsed = runRequestSchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.nonRetryable(
    `the schedule's request no longer fits the API: ${validationError(parsed.error, 'body').message}`,
    'schedule_request_invalid',
  );
}
