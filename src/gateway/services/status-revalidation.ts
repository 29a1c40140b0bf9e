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
//
// The describes share one budget (REVALIDATIONS_PER_S across all tasks): with
// a hundred tasks read in a loop, a describe of each every second was a
// hundred gRPC calls a second, gateway and engine CPU that the reads then
// waited behind (bench status-load: p99 40 ms with them, 26 ms without). Past
// the budget a read skips its describe; the task's next read tries again, so a
// close from outside is seen within tasks-read / REVALIDATIONS_PER_S seconds.
import type { TaskView } from '../../../workflows/types';
import { NOT_RETRYING, type RetryFields } from './run-retries';

/** At most one background describe a task this often. */
const REVALIDATE_MS = 1000;
/** Background describes a second, all tasks together (a burst of as many is allowed). */
const REVALIDATIONS_PER_S = 20;
/** Tasks remembered (their last look and retry fields); the oldest are forgotten first. */
const MAX_TRACKED = 10_000;

interface Tracked {
  lastLook: number;
  inFlight: boolean;
  retries: RetryFields;
}

export class StatusRevalidator {
  private readonly tracked = new Map<string, Tracked>();
  /** The budget's tokens and when they were last topped up. */
  private tokens: number;
  private toppedUp: number;

  constructor(
    private readonly perSecond = REVALIDATIONS_PER_S,
    private readonly now: () => number = Date.now,
    private readonly maxTracked = MAX_TRACKED,
  ) {
    this.tokens = perSecond;
    this.toppedUp = now();
  }

  /** Asks Temporal about `view` in the background unless it was asked within REVALIDATE_MS (or still is). */
  touch(view: TaskView, confirm: (view: TaskView) => Promise<TaskView & Partial<RetryFields>>): void {
    const now = this.now();
    const t = this.tracked.get(view.task_id);
    if (t && (t.inFlight || now - t.lastLook < REVALIDATE_MS)) return;
    if (!this.spend(now)) return;
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

  /** Takes one describe from the shared budget, if one is left. */
  private spend(now: number): boolean {
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.toppedUp) * this.perSecond) / 1000);
    this.toppedUp = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private remember(taskId: string, entry: Tracked): void {
    this.tracked.delete(taskId);
    this.tracked.set(taskId, entry);
    if (this.tracked.size > this.maxTracked) this.tracked.delete(this.tracked.keys().next().value!);
  }

  /** How many tasks it remembers (at most maxTracked, MAX_TRACKED by default). */
  get size(): number {
    return this.tracked.size;
  }
}
