// Workflows for lifecycle.engine.test.ts. Deterministic code only.
import { ApplicationFailure, condition, continueAsNew, sleep, workflowInfo } from '@temporalio/workflow';

export interface ChainResult {
  visited: number[];
  continuedFrom?: string;
  firstRunId: string;
  runId: string;
}

/** Continues as new `n` times, carrying what it has seen in its new input. */
export async function chain(n: number, visited: number[]): Promise<ChainResult> {
  if (n > 0) await continueAsNew<typeof chain>(n - 1, [...visited, n]);
  const info = workflowInfo();
  return {
    visited,
    continuedFrom: info.continuedFromExecutionRunId,
    firstRunId: info.firstExecutionRunId,
    runId: info.runId,
  };
}

/** Continues as new forever, a little apart, until a timeout ends the chain. */
export async function endless(i: number): Promise<void> {
  await sleep(200);
  await continueAsNew<typeof endless>(i + 1);
}

/** Each run is short, the chain long: a run timeout applies to each run, not the chain. */
export async function shortRuns(remaining: number): Promise<number> {
  await sleep(300);
  if (remaining > 0) await continueAsNew<typeof shortRuns>(remaining - 1);
  return workflowInfo().attempt;
}

/** Fails until attempt `succeedOn`, then reports the attempt it succeeded on. */
export async function flaky(succeedOn: number): Promise<number> {
  const { attempt } = workflowInfo();
  if (attempt < succeedOn) throw ApplicationFailure.create({ message: `attempt ${attempt} failed`, type: 'Flaky' });
  return attempt;
}

export async function fatal(): Promise<never> {
  throw ApplicationFailure.nonRetryable('cannot go on', 'Fatal');
}

export async function typedFailure(type: string): Promise<never> {
  throw ApplicationFailure.create({ message: `failed with ${type}`, type });
}

/** Hangs on its first attempt (to be timed out), completes on later ones. */
export async function hangsFirst(): Promise<string> {
  const info = workflowInfo();
  if (info.attempt === 1) await condition(() => false);
  return `attempt ${info.attempt} after ${info.lastFailure?.message ?? 'nothing'}`;
}

export async function waitForever(): Promise<void> {
  await condition(() => false);
}

/**
 * A cron job: counts its successful runs through lastResult; the run after the
 * first fails once, and the one after that reports the failure it saw.
 */
export async function cronJob(): Promise<string> {
  const { lastResult, lastFailure, cronSchedule } = workflowInfo();
  const prev = (lastResult as string | undefined) ?? '0';
  const count = Number(prev.split(':')[0]);
  if (count === 1 && !lastFailure) throw ApplicationFailure.nonRetryable('second run fails');
  return `${count + 1}:${cronSchedule}:${lastFailure?.message ?? ''}`;
}
