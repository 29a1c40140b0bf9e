// What Temporal says of a task's run: closed (with its final status), or
// running (with its description, for what it is retrying): one describe,
// shared by the status read (a cached unfinished status is confirmed) and the
// end of an SSE stream (a closed run's missing end).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client, Connection, WorkflowExecutionDescription } from '@temporalio/client';
import type { TaskView } from '../../../workflows/types';
import { OUTSIDE_END_ERRORS } from '../../../workflows/types';
import { isFinished, viewFromDescription } from './task-views';

const DESCRIBE_DEADLINE_MS = 2000;

export type RunState = { closed: TaskView } | { running: WorkflowExecutionDescription } | { unknown: true };

/**
 * The run's state: `closed` with its final view when Temporal reports it closed
 * (terminated, timed out, or no longer there: `vanished`), `running` with its
 * description, `unknown` when Temporal cannot be asked. `known` gives the
 * cached view, read only once the run is known closed.
 */
export async function runState(
  client: Client,
  connection: Connection,
  taskId: string,
  known: () => Promise<TaskView | undefined>,
): Promise<RunState> {
  let desc;
  try {
    desc = await connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () =>
      client.workflow.getHandle(taskId).describe(),
    );
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) return { unknown: true };
    const cached = await known();
    if (!cached) return { unknown: true };
    return {
      closed: isFinished(cached.status)
        ? cached
        : { ...cached, status: 'failed', error: { ...OUTSIDE_END_ERRORS.NOT_FOUND } },
    };
  }
  if (desc.status.name === 'RUNNING') return { running: desc };
  const cached = await known();
  const recorded = viewFromDescription(desc, cached);
  // The cached end is the run's own, with its details, unless Temporal closed the run otherwise
  // (terminated after the run had cached how it meant to end).
  if (cached && cached.status === recorded.status) return { closed: cached };
  return { closed: { ...(cached ?? {}), ...recorded } };
}

/** The final view of a run Temporal reports closed; undefined while it runs or when Temporal cannot be asked. */
export async function closedRunView(
  client: Client,
  connection: Connection,
  taskId: string,
  known: () => Promise<TaskView | undefined>,
): Promise<TaskView | undefined> {
  const state = await runState(client, connection, taskId, known);
  return 'closed' in state ? state.closed : undefined;
}
