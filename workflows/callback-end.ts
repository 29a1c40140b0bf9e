// A task's last callback delivery (SPEC 6.4): `task.completed`, `task.failed` or
// `task.cancelled`. The run sends its own; the delivery workflow makes one for a
// task that closed without sending it (terminated or timed out from outside).
import type { CallbackConfig, DeliveryItem } from './types';
import { OUTSIDE_END_ERRORS } from './types';

export interface TaskEnd {
  status: 'completed' | 'failed' | 'cancelled';
  timestamp: string;
  output?: string;
  cost?: string;
  error?: { type: string; message: string };
}

/** The final delivery, or none when the callback's `events` leave it out. */
export function endDelivery(
  taskId: string,
  callback: Pick<CallbackConfig, 'events'>,
  end: TaskEnd,
  /** The relay epoch of a rewound task's run: its end is a delivery of its own (another webhook-id). */
  epoch?: number,
): DeliveryItem | undefined {
  if (callback.events && !callback.events.includes(end.status)) return undefined;
  const id = epoch ? `msg_${taskId}_r${epoch}_end` : `msg_${taskId}_end`;
  return { id, type: `task.${end.status}`, body: JSON.stringify(finalNotification(taskId, end)) };
}

function finalNotification(taskId: string, end: TaskEnd): Record<string, unknown> {
  const base = { type: `task.${end.status}`, taskId, status: end.status, timestamp: end.timestamp };
  return end.status === 'completed'
    ? { ...base, result: { output: end.output ?? '', cost: end.cost ?? null } }
    : { ...base, error: end.error ?? null };
}

/**
 * What the delivery workflow makes of its task's latest run when no end came: `running` (watch on),
 * `closed` (the run ended on its own, so its end was signalled before it closed: nothing to add),
 * or the end to deliver for a run closed from outside (the errors GET /tasks/{id} shows).
 */
export function endFromOutside(
  state: { status: string; closedAt?: string },
  now: string,
): 'running' | 'closed' | TaskEnd {
  if (state.status === 'RUNNING') return 'running';
  const error = OUTSIDE_END_ERRORS[state.status as keyof typeof OUTSIDE_END_ERRORS];
  return error ? { status: 'failed', timestamp: state.closedAt ?? now, error: { ...error } } : 'closed';
}
