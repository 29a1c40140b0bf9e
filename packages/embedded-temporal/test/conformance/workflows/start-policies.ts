// Workflows for start-policies.engine.test.ts. Deterministic code only.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
} from '@temporalio/workflow';

export const pushSignal = defineSignal<[string]>('push');
export const finishSignal = defineSignal('finish');
export const seenQuery = defineQuery<string[]>('seen');

/** Collects "push" signals until "finish" and returns them in arrival order. */
export async function collector(): Promise<string[]> {
  const seen: string[] = [];
  let done = false;
  setHandler(pushSignal, (v) => {
    seen.push(v);
  });
  setHandler(finishSignal, () => {
    done = true;
  });
  setHandler(seenQuery, () => seen);
  await condition(() => done);
  return seen;
}

export async function quick(value: string): Promise<string> {
  return value;
}

export async function failing(message: string): Promise<never> {
  throw ApplicationFailure.nonRetryable(message, 'Boom');
}

/** Catches its cancellation, cleans up, and completes normally. */
export async function cancelAware(): Promise<string> {
  try {
    await condition(() => false);
    return 'never';
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => sleep(10));
    return 'saw-cancel';
  }
}

/** Lets its cancellation propagate, so the run ends CANCELED. */
export async function cancelPropagating(): Promise<void> {
  await condition(() => false);
}
