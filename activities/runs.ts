// Which of some runs have closed: the session and slots workflows ask this of
// the runs holding their turn and slots, since a run terminated from outside
// never gives them back itself.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './index';

export function createRunActivities(deps: ActivityDeps) {
  return {
    /** The ids among `workflowIds` whose latest run is closed, or that do not exist. */
    async closedRuns(input: { workflowIds: string[] }): Promise<string[]> {
      const closed = await Promise.all(
        input.workflowIds.map(async (id) => {
          try {
            const d = await deps.temporal.workflow.getHandle(id).describe();
            return d.status.name === 'RUNNING' ? undefined : id;
          } catch (err) {
            if (err instanceof WorkflowNotFoundError) return id;
            throw err;
          }
        }),
      );
      return closed.filter((id): id is string => id !== undefined);
    },
  };
}
