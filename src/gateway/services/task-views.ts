// Task status as derived from Temporal's own record of a workflow, for when the
// cache is empty (or Redis is gone) and the workflow cannot be queried.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { TaskStatus, TaskView } from '../../../workflows/types';
import { isFinished, OUTSIDE_END_ERRORS } from '../../../workflows/types';
import { NOT_RETRYING, RetryFields } from './run-retries';

const CLOSED: Record<string, TaskStatus> = {
  COMPLETED: 'completed',
  FAILED: 'failed',
  TERMINATED: 'failed',
  TIMED_OUT: 'failed',
  CANCELLED: 'cancelled',
};

export { isFinished };

/** A view as Temporal has it while the run is still open: its state may already say how it ends, but that is not recorded yet. */
export function stillRunning(view: TaskView): TaskView {
  return isFinished(view.status) ? { ...view, status: 'running', error: null, completed_at: null } : view;
}

export function viewFromDescription(desc: WorkflowExecutionDescription, known?: TaskView): TaskView {
  const memo = (desc.memo ?? {}) as Record<string, string>;
  const closed = CLOSED[desc.status.name];
  const status: TaskStatus = closed ?? known?.status ?? 'queued';
  const error =
    known?.error ??
    (desc.status.name === 'TERMINATED'
      ? { ...OUTSIDE_END_ERRORS.TERMINATED }
      : desc.status.name === 'TIMED_OUT'
        ? { ...OUTSIDE_END_ERRORS.TIMED_OUT }
        : status === 'failed'
          ? { type: 'agent_error', message: 'the task failed' }
          : status === 'cancelled'
            ? { type: 'cancelled', message: 'the task was cancelled' }
            : null);
  return {
    task_id: desc.workflowId,
    session: memo.session ?? known?.session ?? '',
    account: memo.account ?? known?.account ?? '',
    status,
    progress: status === 'completed' ? 1 : (known?.progress ?? 0),
    current_step: known?.current_step ?? null,
    error: status === 'completed' ? null : error,
    metadata: known?.metadata ?? {},
    created_at: memo.createdAt ?? known?.created_at ?? desc.startTime.toISOString(),
    started_at: known?.started_at ?? null,
    completed_at: desc.closeTime ? (known?.completed_at ?? desc.closeTime.toISOString()) : null,
    ...(known?.workflows && { workflows: known.workflows }),
  };
}

/** The public shape of a task (the account stays internal); `attempt` and `last_error` are null unless a running task's view was read with its retries. */
export function publicView(v: TaskView & Partial<RetryFields>): Omit<TaskView, 'account'> & RetryFields {
  const { account: _account, ...rest } = v;
  return { ...NOT_RETRYING, ...rest };
}
