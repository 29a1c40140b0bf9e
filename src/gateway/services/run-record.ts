// A closed run's record as Temporal keeps it: its result (a completed run), or
// what a capped run produced when it stopped (its failure's details), with the
// answer's block whole again (the workflow stores it by reference). The task
// API's /result reads it, and so does the relay's recovery of a run whose end
// never reached the relay.
import type { Client, Connection } from '@temporalio/client';
import type { BlockEvent, PartialResult, TaskResult } from '../../../workflows/types';
import { answerExpanded } from '../../../workflows/run-events';
import { causeChain } from '../../../workflows/failure-cause';

/** The partial result a capped run failed with (ApplicationFailure details), if the error carries one. */
export function failureDetails(err: unknown): PartialResult | undefined {
  for (const e of causeChain(err)) {
    const d = e.details?.[0] as PartialResult | undefined;
    if (d && typeof d === 'object' && Array.isArray(d.events)) return d;
  }
  return undefined;
}

/** A completed run's result, its answer's block expanded. */
export async function completedRunResult(client: Client, taskId: string): Promise<TaskResult> {
  return answerExpanded((await client.workflow.getHandle(taskId).result()) as TaskResult);
}

/** A closed run's complete events: its result's, or a capped run's partial ones; none for other ends. */
export async function recordedEvents(
  client: Client,
  connection: Connection,
  taskId: string,
  status: string,
): Promise<BlockEvent[]> {
  const within = <T>(fn: () => Promise<T>) => connection.withDeadline(Date.now() + 10_000, fn);
  if (status === 'completed') return (await within(() => completedRunResult(client, taskId))).events;
  if (status !== 'failed') return [];
  try {
    await within(() => client.workflow.getHandle(taskId).result());
  } catch (err) {
    const partial = failureDetails(err);
    if (partial) return answerExpanded(partial).events;
  }
  return [];
}
