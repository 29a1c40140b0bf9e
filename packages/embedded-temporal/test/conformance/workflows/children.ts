// Workflows for children.engine.test.ts. Deterministic code only.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  condition,
  continueAsNew,
  defineQuery,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';

import { collector, finishSignal, pushSignal } from './start-policies';

// The signal collector is shared with start-policies.engine.test.ts.
export { collector, finishSignal, pushSignal };
export const stateQuery = defineQuery<string>('state');

export type ChildKind = 'complete' | 'fail' | 'wait';

/** A child that completes, fails, or waits forever (to be cancelled, terminated or timed out). */
export async function child(kind: ChildKind): Promise<string> {
  if (kind === 'fail') throw ApplicationFailure.nonRetryable('child failed', 'ChildError');
  if (kind === 'wait') await condition(() => false);
  return `child:${workflowInfo().parent?.workflowId ?? 'none'}`;
}

/** Waits to be cancelled and completes normally once it has been. */
export async function cancelAware(): Promise<string> {
  let state = 'waiting';
  setHandler(stateQuery, () => state);
  try {
    await condition(() => false);
    return 'never';
  } catch (err) {
    if (!isCancellation(err)) throw err;
    state = 'cancelled';
    return 'saw-cancel';
  }
}

/** How a child's failure looks from inside the parent. */
function describeChildError(err: unknown): string {
  if (!(err instanceof ChildWorkflowFailure)) return `unexpected:${String(err)}`;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure) return `failed:${cause.type}:${cause.message}`;
  if (cause instanceof CancelledFailure) return 'canceled';
  if (cause instanceof TerminatedFailure) return 'terminated';
  if (cause instanceof TimeoutFailure) return `timed-out:${cause.timeoutType}`;
  return `other:${cause?.name}`;
}

/** Runs one child to its end and reports the outcome. */
export async function parentOf(kind: ChildKind, childId: string, runTimeoutMs?: number): Promise<string> {
  try {
    return `ok:${await executeChild(child, { args: [kind], workflowId: childId, workflowRunTimeout: runTimeoutMs })}`;
  } catch (err) {
    return describeChildError(err);
  }
}

/** Cancels its own child after the child has started. */
export async function parentCancelsChild(childId: string): Promise<string> {
  const scope = new CancellationScope();
  const h = await scope.run(() =>
    startChild(child, {
      args: ['wait'],
      workflowId: childId,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    }),
  );
  scope.cancel();
  try {
    await h.result();
    return 'not-cancelled';
  } catch (err) {
    return describeChildError(err);
  }
}

/** Starts a child, then tries to start a second child with the same id while the first runs. */
export async function duplicateChild(childId: string): Promise<string> {
  await startChild(child, { args: ['wait'], workflowId: childId });
  try {
    await startChild(child, { args: ['complete'], workflowId: childId });
    return 'second-started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return `already-started:${err.workflowId}`;
    return `unexpected:${String(err)}`;
  }
}

/** Starts a child under the given parent close policy and returns (closing the parent) once it runs. */
export async function parentWithPolicy(
  workflowType: 'collector' | 'cancelAware',
  childId: string,
  policy: 'TERMINATE' | 'REQUEST_CANCEL' | 'ABANDON',
): Promise<string> {
  const h = await startChild(workflowType, { workflowId: childId, parentClosePolicy: ParentClosePolicy[policy] });
  return h.firstExecutionRunId;
}

/** Waits for its child to be running and for the test to say go, so the test can look at it. */
export async function parentWaiting(childId: string): Promise<string> {
  let go = false;
  setHandler(finishSignal, () => {
    go = true;
  });
  const h = await startChild(collector, { workflowId: childId });
  await condition(() => go);
  await h.signal(finishSignal);
  return (await h.result()).join(',');
}

/** Signals its own child through the child handle. */
export async function parentSignalsChild(childId: string): Promise<string[]> {
  const h = await startChild(collector, { workflowId: childId });
  await h.signal(pushSignal, 'from-parent');
  await h.signal(finishSignal);
  return await h.result();
}

/** Signals (or cancels) another workflow by id; reports the error when there is none. */
export async function external(targetId: string, action: 'signal' | 'cancel'): Promise<string> {
  const target = getExternalWorkflowHandle(targetId);
  try {
    if (action === 'signal') {
      await target.signal(pushSignal, 'external');
      await target.signal(finishSignal);
    } else {
      await target.cancel();
    }
    return 'delivered';
  } catch (err) {
    if (err instanceof ApplicationFailure) return `error:${err.message}`;
    return `unexpected:${String(err)}`;
  }
}

/** Child that continues-as-new once, so the parent must follow the chain to its end. */
export async function chainedChild(n: number): Promise<string> {
  if (n > 0) {
    await sleep(1);
    await continueAsNew<typeof chainedChild>(n - 1);
  }
  return `chain-end:${workflowInfo().continuedFromExecutionRunId ? 'continued' : 'first'}`;
}

export async function parentOfChain(childId: string): Promise<string> {
  return await executeChild(chainedChild, { args: [2], workflowId: childId });
}
