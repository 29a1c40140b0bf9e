// A run's max_duration: the longest the agent may work, from when it starts
// (its session's turn and account slot granted) to its answer, across
// continue-as-new. It is a durable timer in the run's own history, not an
// execution timeout: when it fires, whatever is in flight (a model turn, a
// tool, DAG steps, a `wait`) is cancelled and the run ends itself, failed with
// `max_duration`, with the same closing events, result and releases as any
// other cap. Without max_duration the run's commands are unchanged.
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

export const MAX_DURATION = 'max_duration';

export interface DurationCap {
  kind: 'cap';
  type: typeof MAX_DURATION;
  message: string;
}

export class RunDeadline {
  private reached = false;

  /** `at`: the deadline carried from an earlier run of the task (epoch ms); else it is set when the work starts. */
  constructor(
    private readonly maxDurationMs: number | undefined,
    public at: number | undefined,
  ) {}

  /** Runs the work under the deadline: its result, or the cap once the deadline cancelled it. */
  async within<T>(work: () => Promise<T>): Promise<T | DurationCap> {
    if (this.maxDurationMs === undefined) return work();
    this.at ??= Date.now() + this.maxDurationMs;
    const scope = new CancellationScope();
    const timer = new CancellationScope();
    // The timer's own scope ends it once the work is done (a task cancelled from outside cancels both).
    void timer
      .run(() => sleep(Math.max(1, this.at! - Date.now())))
      .then(
        () => {
          this.reached = true;
          scope.cancel();
        },
        () => undefined,
      );
    try {
      return await scope.run(work);
    } catch (err) {
      if (this.reached && isCancellation(err))
        return {
          kind: 'cap',
          type: MAX_DURATION,
          message: `the run reached its max_duration of ${this.maxDurationMs / 1000} s`,
        };
      throw err;
    } finally {
      timer.cancel();
    }
  }
}
