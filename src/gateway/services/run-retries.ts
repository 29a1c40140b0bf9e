// What a running task is retrying, from Temporal's own record of its pending
// activities (attempt, last failure): the task view's `attempt` and
// `last_error`. Read at request time, never cached: a retry that succeeded
// leaves no pending activity, and the fields go back to null.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';

export interface RetryFields {
  /** The attempt under way of the call being retried (2 = the first retry); null when nothing is retried. */
  attempt: number | null;
  /** Why the previous attempt failed; null when nothing is retried. */
  last_error: { type: string; message: string } | null;
}

export const NOT_RETRYING: RetryFields = { attempt: null, last_error: null };

export async function retryFields(client: Client, desc: WorkflowExecutionDescription): Promise<RetryFields> {
  const pending = (desc.raw.pendingActivities ?? []).filter((a) => (a.attempt ?? 1) > 1 && a.lastFailure);
  if (!pending.length) return NOT_RETRYING;
  const worst = pending.reduce((a, b) => ((b.attempt ?? 1) > (a.attempt ?? 1) ? b : a));
  const err = await lastFailureOf(client, worst);
  const type = (err as { type?: string } | undefined)?.type ?? err?.name ?? 'error';
  return { attempt: worst.attempt ?? null, last_error: { type, message: err?.message ?? 'unknown failure' } };
}

/** A pending activity's last failure as an error. Failure messages are encrypted in history (the failure converter encodes them): decoded with the client's codec. */
export function lastFailureOf(client: Client, pending: { lastFailure?: unknown }): Promise<Error | undefined> {
  return decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, pending.lastFailure as never).catch(
    () => undefined,
  );
}
