// Workflows for the durability test: each spends its life in one state the
// server must carry across a SIGKILL.
import { proxyActivities, sleep, executeChild, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities';

const slow = proxyActivities<typeof activities>({
  startToCloseTimeout: '4s',
  retry: { initialInterval: '200ms', maximumAttempts: 5 },
});
const flaky = proxyActivities<typeof activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '3s', backoffCoefficient: 1, maximumAttempts: 3 },
});

export async function inActivity(): Promise<string> {
  return await slow.slowEcho('activity-done', 1500);
}

export async function inTimer(ms: number): Promise<number> {
  const start = Date.now();
  await sleep(ms);
  return Date.now() - start;
}

export async function inBackoff(): Promise<number> {
  return await flaky.failFirstAttempt();
}

export async function childSleeper(ms: number): Promise<string> {
  await sleep(ms);
  return `child slept ${ms}`;
}

export async function inChild(): Promise<string> {
  return await executeChild(childSleeper, { args: [2500], workflowId: `${workflowInfo().workflowId}-child` });
}
