// Eager workflow start: a StartWorkflowExecution with requestEagerExecution gets
// the new run's first workflow task in its response, already started for the
// caller (its identity and request id on the started event), so a worker sharing
// the caller's connection runs it without a poll. The real server's rules: only
// a run this request created (a new one, also after TERMINATE_EXISTING) and only
// when its first task is due at once (no start delay or cron backoff); a retried
// request gets the task again while that first attempt is still out.
import type { Engine, PollResponse } from './engine';
import type { Execution } from './state';
import { dispatchWorkflowTask, startedTaskResponse } from './workflow-tasks';

/** Whether a start may hand its first task to the caller: asked for, and nothing to wait for. */
export function acceptsEagerStart(req: any, backoffMs: number): boolean {
  return !!req.requestEagerExecution && backoffMs === 0;
}

/** The first workflow task for an eager start's response, or undefined when the run is not its to take. */
export function eagerWorkflowTask(eng: Engine, run: Execution, req: any): PollResponse | undefined {
  if (!req.requestEagerExecution || !eng.isOpen(run) || run.startRequestId !== req.requestId) return undefined;
  if (!run.history[0]?.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted) return undefined;
  const wft = run.wft;
  // Its first task (events 2 and 3), first attempt; anything later went through matching.
  if (!wft || wft.scheduledEventId !== 2 || wft.attempt !== 1) return undefined;
  if (wft.startedEventId === undefined)
    return dispatchWorkflowTask(eng, eng.key(run), 2, 1, req.identity ?? '', req.requestId);
  return wft.startedEventId === 3 ? startedTaskResponse(run) : undefined;
}
