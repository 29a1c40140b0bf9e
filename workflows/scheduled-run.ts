// What a schedule's action starts at each of its times (SPEC 2.5): one
// background task with the schedule's request, in the request's session. The
// task is a child of this run, so the Web UI links the two, and this run
// lasts as long as its task: the schedule's overlap policy (skip, buffer_one,
// allow_all) then applies to the tasks themselves. The task outlives this run
// (ABANDON): deleting a schedule never cuts a task short.
import {
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  isCancellation,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallbackConfig, StoredRunRequest } from './types';
import { agentTask } from './agent-task';
import { readTaskInput } from './task-input';

export interface ScheduledRunInput {
  scheduleId: string;
  account: string;
  session: string;
  /** The request each task runs: the entry's message and the run request's other settings. */
  request: StoredRunRequest;
  /** The request's callback as checked when the schedule was made (its headers: ciphertext in history). */
  callback?: CallbackConfig;
}

export interface ScheduledRunResult {
  task_id: string;
  status: 'completed' | 'failed' | 'cancelled';
}

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

export async function scheduledRun(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  // The task's id comes from this run's ids (its workflow id names the schedule time; the run id a
  // second trigger within that second): a retried activity or a replay makes the same task.
  const { workflowId, firstExecutionRunId } = workflowInfo();
  const task = await acts.prepareScheduledTask({
    ...input,
    runWorkflowId: workflowId,
    runFirstRunId: firstExecutionRunId,
  });
  // Either shape: an activity result recorded before the grouped input carries it flat.
  const taskInput = readTaskInput(task.input);
  const child = await startChild(agentTask, {
    workflowId: taskInput.taskId,
    args: [taskInput],
    memo: task.memo,
    searchAttributes: task.searchAttributes,
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
  try {
    await child.result();
    return { task_id: taskInput.taskId, status: 'completed' };
  } catch (err) {
    // The task's own end (failed, cancelled) is its status; this run only reports it.
    return { task_id: taskInput.taskId, status: isCancellation(err) ? 'cancelled' : 'failed' };
  }
}
