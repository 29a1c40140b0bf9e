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
