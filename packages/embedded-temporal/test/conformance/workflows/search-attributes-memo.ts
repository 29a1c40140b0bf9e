// Workflows for search-attributes-memo.engine.test.ts. Deterministic code only.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type * as activities from '../activities/search-attributes-memo';

export const keywordKey = defineSearchAttributeKey('CustomKeyword', SearchAttributeType.KEYWORD);
export const intKey = defineSearchAttributeKey('CustomInt', SearchAttributeType.INT);
export const finishSignal = defineSignal('finish');

// The workflow waits for the activity to acknowledge its cancellation, so nothing is pending once it closes.
const acts = proxyActivities<typeof activities>({
  startToCloseTimeout: '1m',
  heartbeatTimeout: '5s',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export interface Seen {
  memo?: Record<string, unknown>;
  keyword?: string;
  int?: number;
}

function seen(): Seen {
  const info = workflowInfo();
  return {
    memo: info.memo,
    keyword: info.typedSearchAttributes.get(keywordKey),
    int: info.typedSearchAttributes.get(intKey),
  };
}

/** Reports what it was started with, upserts memo and search attributes, then waits for "finish". */
export async function upserter(): Promise<{ atStart: Seen; afterUpsert: Seen }> {
  let done = false;
  setHandler(finishSignal, () => {
    done = true;
  });
  const atStart = seen();
  upsertMemo({ added: 'new', removed: undefined });
  upsertSearchAttributes([
    { key: intKey, value: 42 },
    { key: keywordKey, value: null },
  ]);
  const afterUpsert = seen();
  await condition(() => done);
  return { atStart, afterUpsert };
}

/** Upserts in its first run, continues as new without options, reports what the second run got. */
export async function carrier(continued: boolean): Promise<Seen> {
  if (!continued) {
    upsertSearchAttributes([{ key: intKey, value: 7 }]);
    await continueAsNew<typeof carrier>(true);
  }
  return seen();
}

/** Upserts, then fails its first attempt; the retry reports what it was started with. */
export async function retriedUpserter(): Promise<Seen> {
  if (workflowInfo().attempt === 1) {
    upsertSearchAttributes([{ key: keywordKey, value: 'upserted' }]);
    upsertMemo({ note: 'upserted' });
    throw ApplicationFailure.create({ message: 'first attempt fails' });
  }
  return seen();
}

/** Upserts an attribute the namespace does not have. */
export async function badUpsert(): Promise<void> {
  upsertSearchAttributes({ NoSuchAttribute: ['x'] });
  await condition(() => false);
}

/** Runs an activity that stays pending until the workflow is cancelled. */
export async function withPendingActivity(): Promise<string> {
  try {
    await CancellationScope.cancellable(() => acts.blockUntilCancelled());
    return 'finished';
  } catch (err) {
    if (isCancellation(err)) return 'cancelled';
    throw err;
  }
}
