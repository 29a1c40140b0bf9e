// Workflows for the limits tests: each one pushes one limit of the server.
import {
  ActivityFailure,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/limits';

const acts = proxyActivities<typeof activities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '10ms' },
});

export const go = defineSignal<[string]>('go');
export const sized = defineQuery<string, [number]>('sized');

/** Waits for one `go` signal, answers `sized` queries with that many bytes; returns the signal's length. */
export async function waiter(): Promise<number> {
  let got: string | undefined;
  setHandler(go, (s) => void (got = s));
  setHandler(sized, (n) => 'q'.repeat(n));
  await condition(() => got !== undefined);
  return got!.length;
}

/** Returns `n` bytes. */
export async function bigResult(n: number): Promise<string> {
  return 'r'.repeat(n);
}

export interface ActivityOutcome {
  result?: number;
  failure?: { message: string; cause?: string; causeName?: string };
}

/** Runs an activity returning `n` bytes and reports how it ended. */
export async function bigActivity(n: number): Promise<ActivityOutcome> {
  try {
    return { result: (await acts.sized(n)).length };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return { failure: { message: err.message, cause: err.cause?.message, causeName: err.cause?.name } };
  }
}

/** Runs `n`-byte activities in a loop forever: only a history limit ends it. */
export async function activityLoop(n: number): Promise<void> {
  for (;;) await acts.sized(n);
}

export interface Suggestion {
  iterations: number;
  historyLength: number;
  historySize: number;
}

/** Runs `n`-byte activities until the server suggests continue-as-new. */
export async function untilSuggested(n: number): Promise<Suggestion> {
  let iterations = 0;
  while (!workflowInfo().continueAsNewSuggested) {
    await acts.sized(n);
    iterations++;
  }
  return { iterations, historyLength: workflowInfo().historyLength, historySize: workflowInfo().historySize };
}
