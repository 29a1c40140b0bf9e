// Which of some runs have closed: the session and slots workflows ask this of
// the runs holding their turn and slots, and a callback's delivery workflow of
// its task, since a run terminated from outside never says so itself.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './index';

export interface RunState {
  /** Temporal's status name of the workflow's latest run (RUNNING, COMPLETED, TERMINATED, TIMED_OUT...), NOT_FOUND when there is none. */
  status: string;
  /** When that run closed (ISO 8601), if it has. */
  closedAt?: string;
}

export function createRunActivities(deps: ActivityDeps) {
  async function runState(input: { workflowId: string }): Promise<RunState> {
    try {
      const d = await deps.temporal.workflow.getHandle(input.workflowId).describe();
      return { status: d.status.name, ...(d.closeTime && { closedAt: d.closeTime.toISOString() }) };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
      throw err;
    }
  }
  return {
    runState,
    /** The ids among `workflowIds` whose latest run is closed, or that do not exist. */
    async closedRuns(input: { workflowIds: string[] }): Promise<string[]> {
      const states = await Promise.all(input.workflowIds.map((workflowId) => runState({ workflowId })));
      return input.workflowIds.filter((_, i) => states[i].status !== 'RUNNING');
    },
  };
}
