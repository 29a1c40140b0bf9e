// Ids of schedules and of the tasks they start, derived rather than stored:
// a repeated request (same Idempotency-Key) finds the schedules it made, and
// a schedule's description names its tasks without asking each run.
import { createHash } from 'node:crypto';

const hex = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The ids of a run request's schedules, from its task's id (unique per request, stable for a repeat). */
export function scheduleIdsFor(taskId: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `sched_${hex(`${taskId}\u0000schedule\u0000${i}`)}`);
}

/** The task a schedule's run starts, from that run's workflow id (one per schedule time). */
export function scheduledTaskId(runWorkflowId: string): string {
  return `task_${hex(`scheduled\u0000${runWorkflowId}`)}`;
}
