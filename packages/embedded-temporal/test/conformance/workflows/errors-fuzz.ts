// Workflows of errors-fuzz.engine.test.ts. Deterministic code only.
import { proxyActivities, defineSignal, defineQuery, defineUpdate, setHandler, condition } from '@temporalio/workflow';
import type * as activities from '../activities/errors-fuzz';

const acts = proxyActivities<typeof activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

/** The liveness probe run after every fuzz batch. */
export async function echo(value: string): Promise<string> {
  return await acts.echoActivity(value);
}

export const doneSignal = defineSignal('done');
export const stateQuery = defineQuery<string>('state');
export const bumpUpdate = defineUpdate<number, [number]>('bump');

/** Runs until signalled; answers queries and updates meanwhile. */
export async function waitForDone(): Promise<string> {
  let done = false;
  let total = 0;
  setHandler(doneSignal, () => {
    done = true;
  });
  setHandler(stateQuery, () => (done ? 'done' : 'waiting'));
  setHandler(bumpUpdate, (n) => (total += n));
  await condition(() => done);
  return `total:${total}`;
}

const hand = proxyActivities<typeof activities>({ startToCloseTimeout: '1s', retry: { maximumAttempts: 1 } });

/**
 * Driven by the test through raw worker RPCs (poll, respond twice, respond late), so
 * its commands must be what the test sends: one activity with id "1", then complete.
 */
export async function handDriven(): Promise<string> {
  try {
    await hand.handActivity();
  } catch {
    // The test lets it time out on purpose in one of the runs.
  }
  return 'done';
}
