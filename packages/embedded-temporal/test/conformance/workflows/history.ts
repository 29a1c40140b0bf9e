// Workflows for the history tests.
import {
  continueAsNew,
  sleep,
  proxyActivities,
  defineSignal,
  defineUpdate,
  setHandler,
  condition,
  defineQuery,
} from '@temporalio/workflow';
import type * as activities from '../activities/history';

const acts = proxyActivities<typeof activities>({ startToCloseTimeout: '10s' });

export async function manyTimers(n: number): Promise<number> {
  for (let i = 0; i < n; i++) await sleep(1);
  return n;
}

export async function chain(n: number): Promise<string> {
  if (n > 0) await continueAsNew<typeof chain>(n - 1);
  return 'end of chain';
}

export const release = defineSignal('release');
export const bump = defineUpdate<number, [number]>('bump');
export const slowBump = defineUpdate<number, [number]>('slowBump');
export const value = defineQuery<number>('value');

export async function updatable(): Promise<number> {
  let v = 0;
  let released = false;
  setHandler(release, () => void (released = true));
  setHandler(value, () => v);
  setHandler(bump, (n) => (v += n));
  setHandler(slowBump, async (n) => {
    await acts.slowAdd(v, n);
    v += n;
    return v;
  });
  await condition(() => released);
  return v;
}
