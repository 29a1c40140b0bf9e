// Workflows for the workflow-task tests.
import { condition, defineSignal, defineQuery, setHandler, sleep } from '@temporalio/workflow';

export const go = defineSignal<[string]>('go');
export const seen = defineQuery<string[]>('seen');

export async function waitForSignals(n: number): Promise<string[]> {
  const got: string[] = [];
  setHandler(go, (s) => void got.push(s));
  setHandler(seen, () => got);
  await condition(() => got.length >= n);
  return got;
}

export async function napThenDone(ms: number): Promise<string> {
  await sleep(ms);
  return 'done';
}

export const fix = defineSignal('fix');

/**
 * Fails its workflow task (a plain Error is a task failure, not a workflow one)
 * until the fix signal is in its history: the retries are transient until then.
 */
export async function failsUntilFixed(): Promise<string> {
  let fixed = false;
  setHandler(fix, () => void (fixed = true));
  // Signals delivered in the same activation are handled by now.
  await Promise.resolve();
  if (!fixed) throw new Error('not fixed yet');
  return 'fixed';
}
