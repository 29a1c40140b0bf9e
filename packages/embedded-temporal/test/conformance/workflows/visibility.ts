// Workflows of visibility.engine.test.ts: one per execution status the queries look for.
// Deterministic code only.
import { ApplicationFailure, condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from '../activities/visibility';

const acts = proxyActivities<typeof activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

export async function visDone(value: string): Promise<string> {
  return await acts.tag(value);
}

export async function visFail(): Promise<void> {
  throw ApplicationFailure.nonRetryable('failed on purpose', 'VisFailure');
}

export const finish = defineSignal('finish');

/** Runs until signalled, cancelled (status Canceled) or terminated. */
export async function visWait(): Promise<void> {
  let done = false;
  setHandler(finish, () => {
    done = true;
  });
  await condition(() => done);
}
