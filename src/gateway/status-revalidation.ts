// Status reads answered from the cache while Temporal is asked in the
// background. A status that Temporal has not recorded as final (queued,
// running, or an end the run cached a moment before its close) used to cost
// every GET /tasks/{id} a describe; under load (a hundred tasks completing on
// two cores) the engine answered those in 50-150 ms, and the SPEC wants a
// status check under 50 ms. Now the read returns the cached status at once and
// starts, at most once a second per task and one at a time, the describe that
// confirms it; what that finds (a close from outside, the attempt a retried
// call is on) serves the next reads. The session's watch of its active run
// records closes in the cache as they happen (activities/runs.ts), so a close
// is seen within a moment either way.
import type { TaskView } from '../../workflows/types';
import { NOT_RETRYING, type RetryFields } from './run-retries';

/** At most one background describe a task this often. */
const REVALIDATE_MS = 1000;
/** Tasks remembered (their last look and retry fields); the oldest are forgotten first. */
const MAX_TRACKED = 10_000;

interface Tracked {
  lastLook: number;
  inFlight: boolean;
  retries: RetryFields;
}

export class StatusRevalidator {
  private readonly tracked = new Map<string, Tracked>();

  /** Asks Temporal about `view` in the background unless it was asked within REVALIDATE_MS (or still is). */
  touch(view: TaskView, confirm: (view: TaskView) => Promise<TaskView & Partial<RetryFields>>): void {
    const now = Date.now();
    const t = this.tracked.get(view.task_id);
    if (t && (t.inFlight || now - t.lastLook < REVALIDATE_MS)) return;
    const entry: Tracked = { lastLook: now, inFlight: true, retries: t?.retries ?? NOT_RETRYING };
    this.remember(view.task_id, entry);
    void confirm(view)
      .then((seen) => void (entry.retries = { attempt: seen.attempt ?? null, last_error: seen.last_error ?? null }))
      .catch(() => undefined)
      .finally(() => (entry.inFlight = false));
  }

  /** What the last look found the task retrying (none when it found nothing, or never looked). */
  retries(taskId: string): RetryFields {
    return this.tracked.get(taskId)?.retries ?? NOT_RETRYING;
  }

  private remember(taskId: string, entry: Tracked): void {
    this.tracked.delete(taskId);
    this.tracked.set(taskId, entry);
    if (this.tracked.size > MAX_TRACKED) this.tracked.delete(this.tracked.keys().next().value!);
  }
}
