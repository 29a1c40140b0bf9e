// Whether Temporal says a task's run has closed, and its final status if so:
// one describe, shared by the status read (a cached unfinished status is
// confirmed) and the end of an SSE stream (a closed run's missing end).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client, Connection } from '@temporalio/client';
import type { TaskView } from '../../workflows/types';
import { isFinished, viewFromDescription } from './task-views';

const DESCRIBE_DEADLINE_MS = 2000;

/**
 * The final view of a run Temporal reports closed (terminated, timed out, or no
 * longer there: `vanished`); undefined while it runs or when Temporal cannot be
 * asked. `known` gives the cached view, read only once the run is known closed.
 */
export async function closedRunView(client: Client, connection: Connection, taskId: string, known: () => Promise<TaskView | undefined>): Promise<TaskView | undefined> {
  let desc;
  try {
    desc = await connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () => client.workflow.getHandle(taskId).describe());
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) return undefined;
    const cached = await known();
    if (!cached) return undefined;
    return isFinished(cached.status) ? cached : { ...cached, status: 'failed', error: { type: 'vanished', message: 'the run no longer exists in Temporal' } };
  }
  if (desc.status.name === 'RUNNING') return undefined;
  const cached = await known();
  if (cached && isFinished(cached.status)) return cached;
  return { ...(cached ?? {}), ...viewFromDescription(desc, cached) };
}
