// Ids of schedules and of the tasks they start, derived rather than stored:
// a repeated request (same Idempotency-Key) finds the schedules it made, and
// a schedule's description names its tasks without asking each run.
import { createHash } from 'node:crypto';

const hex = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The ids of a run request's schedules, from its task's id (unique per request, stable for a repeat). */
export function scheduleIdsFor(taskId: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `sched_${hex(`${taskId}\u0000schedule\u0000${i}`)}`);
}

/**
 * The task a schedule's run starts, from that run's workflow id and first run id. Temporal names a
 * schedule's run by the schedule and the second it is due, so two triggers within one second (the
 * first run closed by the second) are two runs of one workflow id: the run id tells them apart.
 * Without it (a run recorded before runs carried it, or a listing without it), the workflow id alone.
 */
export function scheduledTaskId(runWorkflowId: string, firstRunId?: string): string {
  const key = firstRunId ? `${runWorkflowId}\u0000${firstRunId}` : runWorkflowId;
  return `task_${hex(`scheduled\u0000${key}`)}`;
}
