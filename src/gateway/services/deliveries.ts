// A task's callback deliveries (GET /tasks/{id}/deliveries): the delivery
// workflow's record of each, and for the one under way Temporal's own record
// of its pending attempt (attempts so far, the last failure, when the next
// attempt is due). Read at request time, never cached.
import type { Client, Connection } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { DeliveryRecord } from '../../../workflows/types';
import { temporalCall } from './temporal-errors';
import { NotFoundError } from '../../common/errors';
import { lastFailureOf } from './run-retries';
import { callbackWorkflowId, deliveriesQuery } from '../../../workflows/definitions';

export interface DeliveryView extends DeliveryRecord {
  /** When the next attempt of a delivery under way is due; null otherwise. */
  next_attempt_at: string | null;
}

export async function deliveriesOf(client: Client, connection: Connection, taskId: string): Promise<DeliveryView[]> {
  const handle = client.workflow.getHandle(callbackWorkflowId(taskId));
  // A query waits for a worker: after a worker's crash, Temporal first gives up on its sticky queue.
  const deadline = <T>(fn: () => Promise<T>) => temporalCall(() => connection.withDeadline(Date.now() + 10_000, fn));
  let records: DeliveryRecord[];
  let desc;
  try {
    [records, desc] = await Promise.all([
      deadline(() => handle.query(deliveriesQuery)),
      deadline(() => handle.describe()),
    ]);
  } catch (err) {
    // No delivery workflow: the task has delivered nothing yet (or asked for nothing).
    if (err instanceof WorkflowNotFoundError || err instanceof NotFoundError) return [];
    throw err;
  }
  const views: DeliveryView[] = records.map((r) => ({ ...r, next_attempt_at: null }));
  // The delivery's attempt (an idle delivery workflow's pending activity is its check of the task).
  const pending = desc.raw.pendingActivities?.find((a) => a.activityType?.name === 'deliverCallback');
  const current = views.find((v) => v.status === 'pending');
  if (!pending || !current) return views;
  const attempt = pending.attempt ?? 1;
  const started = String(pending.state) === 'PENDING_ACTIVITY_STATE_STARTED' || pending.state === 2;
  current.attempts = attempt - 1 + (started ? 1 : 0);
  if (pending.lastFailure) {
    const err = await lastFailureOf(client, pending);
    current.last_error = err?.message ?? 'unknown failure';
    current.last_status = statusIn(err);
  }
  const next = pending.nextAttemptScheduleTime?.seconds;
  if (next !== undefined && next !== null) current.next_attempt_at = new Date(Number(next) * 1000).toISOString();
  return views;
}

/** The receiver's HTTP status a failed attempt recorded in its details, if any. */
function statusIn(err: unknown): number | null {
  const details = (err as { details?: unknown[] } | undefined)?.details;
  const status = (details?.[0] as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : null;
}
