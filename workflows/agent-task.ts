// One run of the agent on one message: the task's state machine, and the owner
// of its end. queued (waiting for the session's turn, then for an account slot)
// -> running (the agent loop) -> completed | failed | cancelled. Status is
// readable by query and filterable through the TaskStatus search attribute.
//
// Activities only do I/O; everything the run decides is decided here: when it
// ends and how, what its result is, what is published and cached about it. A
// bug in this code throws a plain error, which fails the workflow task (Temporal
// retries it, and a fixed worker picks the run up where it was) rather than the
// run. The run's state and its three ends live in TaskRun (task-run.ts).
import { TemporalFailure, allHandlersFinished, condition, continueAsNew } from '@temporalio/workflow';
import type { TaskResult } from './types';
import { type AnyTaskInput, readTaskInput } from './task-input';
import type { LoopEnd } from './agent-loop';
import { TaskRun } from './task-run';

export async function agentTask(input: AnyTaskInput): Promise<TaskResult> {
  // Either shape: runs started before the grouped input carry it flat (task-input.ts).
  const run = new TaskRun(readTaskInput(input));
  let end: LoopEnd;
  try {
    end = await run.work();
  } catch (err) {
    // Not a failure Temporal reported (a bug here): fail the workflow task, keep the run.
    if (!(err instanceof TemporalFailure)) throw err;
    return await run.end(() => run.fail(err));
  }
  if (end.kind === 'continue') {
    // Past the history budget (agent-loop.ts): the next run carries the state on, once every handler is done.
    await condition(allHandlersFinished);
    return await continueAsNew<typeof agentTask>(run.carryOver());
  }
  return await run.end(() => (end.kind === 'answered' ? run.complete() : run.cap(end)));
}
