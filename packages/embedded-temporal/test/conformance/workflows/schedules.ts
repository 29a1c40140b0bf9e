// Workflows started by the schedules conformance tests. Deterministic code only.
import { ApplicationFailure, condition, defineSignal, setHandler, workflowInfo } from '@temporalio/workflow';

export const releaseSignal = defineSignal('release');

/** Returns at once: the plain action of most schedules. */
export async function scheduledGreeting(name: string): Promise<string> {
  return `hello ${name}`;
}

/** Stays running until signalled, so overlap policies have something to overlap with. */
export async function blocker(): Promise<string> {
  let released = false;
  setHandler(releaseSignal, () => {
    released = true;
  });
  await condition(() => released);
  return 'released';
}

/** Fails for good (for pause-on-failure). */
export async function failing(): Promise<never> {
  throw ApplicationFailure.nonRetryable('scheduled failure', 'ScheduledFailure');
}

/** Counts its position in the schedule's result chain through the last completion result. */
export async function chained(): Promise<number> {
  const last = workflowInfo().lastResult;
  return typeof last === 'number' ? last + 1 : 1;
}
