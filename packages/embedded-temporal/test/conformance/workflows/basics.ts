// Workflows used by the conformance suite. Deterministic code only.
import {
  proxyActivities,
  sleep,
  defineSignal,
  defineQuery,
  defineUpdate,
  setHandler,
  condition,
  continueAsNew,
  startChild,
  executeChild,
  workflowInfo,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  upsertSearchAttributes,
  getExternalWorkflowHandle,
  proxyLocalActivities,
  ParentClosePolicy,
} from '@temporalio/workflow';
import type * as activities from '../activities/basics';

const acts = proxyActivities<typeof activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

export async function greet(name: string): Promise<string> {
  return await acts.greet(name);
}

export const addSignal = defineSignal<[number]>('add');
export const doneSignal = defineSignal('done');
export const totalQuery = defineQuery<number>('total');
export const setUpdate = defineUpdate<number, [number]>('set');

export async function counter(): Promise<number> {
  let total = 0;
  let done = false;
  setHandler(addSignal, (n) => {
    total += n;
  });
  setHandler(doneSignal, () => {
    done = true;
  });
  setHandler(totalQuery, () => total);
  setHandler(
    setUpdate,
    (n) => {
      const old = total;
      total = n;
      return old;
    },
    {
      validator: (n) => {
        if (n < 0) throw new Error('negative');
      },
    },
  );
  await condition(() => done);
  return total;
}

export async function sleeper(ms: number): Promise<string> {
  await sleep(ms);
  return 'woke';
}

export async function failing(): Promise<void> {
  throw ApplicationFailure.nonRetryable('boom', 'MyError');
}

export async function retryingActivity(attempts: number, backoffMs: number): Promise<number> {
  const a = proxyActivities<typeof activities>({
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: attempts + 1, initialInterval: backoffMs, backoffCoefficient: 1 },
  });
  return await a.failUntil(attempts);
}

export async function continuer(n: number): Promise<number> {
  if (n > 0) await continueAsNew<typeof continuer>(n - 1);
  return workflowInfo().continuedFromExecutionRunId ? 100 : 0;
}

export async function parent(childName: string): Promise<string> {
  const r = await executeChild(greet, { args: [childName], workflowId: `${workflowInfo().workflowId}-child` });
  return `parent:${r}`;
}

export async function parentAbandons(): Promise<string> {
  const h = await startChild(counter, {
    workflowId: `${workflowInfo().workflowId}-child`,
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  return h.workflowId;
}

export async function parentTerminates(): Promise<string> {
  const h = await startChild(counter, { workflowId: `${workflowInfo().workflowId}-child` });
  return h.workflowId;
}

export async function cancellable(): Promise<string> {
  try {
    await CancellationScope.cancellable(async () => {
      await acts.waitForCancel();
    });
    return 'not cancelled';
  } catch (err) {
    if (isCancellation(err)) return 'cancelled';
    throw err;
  }
}

export async function signaller(targetId: string): Promise<void> {
  await getExternalWorkflowHandle(targetId).signal(addSignal, 5);
  await getExternalWorkflowHandle(targetId).signal(doneSignal);
}

export async function upserter(value: string): Promise<void> {
  upsertSearchAttributes({ CustomKeyword: [value] });
  await sleep(10);
}

export async function localActivity(): Promise<string> {
  const l = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '5s' });
  return await l.greet('local');
}

export async function heartbeater(): Promise<string> {
  const a = proxyActivities<typeof activities>({
    startToCloseTimeout: '20s',
    heartbeatTimeout: '1s',
    retry: { maximumAttempts: 2, initialInterval: 10 },
  });
  return await a.heartbeatOnceThenStall();
}
