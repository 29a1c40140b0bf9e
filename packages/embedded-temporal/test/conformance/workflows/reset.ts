// Workflows for reset.engine.test.ts. Deterministic code only.
import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/reset';

const { step } = proxyActivities<typeof activities>({ startToCloseTimeout: '10s' });

export const noteSignal = defineSignal<[string]>('note');
export const finishSignal = defineSignal('finish');
export const logQuery = defineQuery<string[]>('log');
export const noteUpdate = defineUpdate<number, [string]>('noteUpdate');

/**
 * Two activities, `a` then `b`, then (when asked to) waits for `finish`. The log holds what it
 * saw in order: signals as they arrive, and each step with the log it was scheduled after, so a
 * test can tell whether a signal reached the workflow before it decided to schedule `b`.
 */
export async function steps(waitForFinish: boolean): Promise<string[]> {
  const log: string[] = [];
  let finished = false;
  setHandler(noteSignal, (note) => void log.push(`signal:${note}`));
  setHandler(finishSignal, () => void (finished = true));
  setHandler(logQuery, () => log);
  setHandler(noteUpdate, (note) => log.push(`update:${note}`));
  log.push(await step('a', [...log]));
  log.push(await step('b', [...log]));
  if (waitForFinish) await condition(() => finished);
  return log;
}

/** Waits for `finish`, then returns its workflow id. */
export async function waiter(): Promise<string> {
  let finished = false;
  setHandler(finishSignal, () => void (finished = true));
  await condition(() => finished);
  return workflowInfo().workflowId;
}

/** Starts a `waiter` child, runs step `a`, then returns what the child returns. */
export async function parentOfWaiter(): Promise<string> {
  const child = await startChild(waiter, { workflowId: `${workflowInfo().workflowId}-child` });
  await step('a', []);
  return `child ${await child.result()}`;
}

/** Runs step `a`, then the first run continues as new and the second waits for `finish`. */
export async function continuesOnce(continued: boolean): Promise<string[]> {
  const log: string[] = [];
  let finished = false;
  setHandler(noteSignal, (note) => void log.push(`signal:${note}`));
  setHandler(finishSignal, () => void (finished = true));
  log.push(await step('a', [...log]));
  if (!continued) await continueAsNew<typeof continuesOnce>(true);
  await condition(() => finished);
  return log;
}
