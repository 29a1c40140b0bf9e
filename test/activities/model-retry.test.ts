// The time bound of a model turn's retries (no network).
import { ApplicationFailure } from '@temporalio/common';
import { boundedModelFailure, modelRetryDelayMs } from '../../activities/model-retry';

const down = () => ApplicationFailure.retryable('the model is unavailable (HTTP 503): busy', 'model_unavailable');

test('the wait doubles from 1 s and stops growing at 30 s', () => {
  expect([1, 2, 3, 4, 5, 6, 7, 12].map(modelRetryDelayMs)).toEqual([
    1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
  ]);
});

test('within the bound: retried after its backoff, cut so the next attempt starts by the bound', () => {
  const early = boundedModelFailure(down(), 3, 10_000, 120_000);
  expect(early.retryInMs).toBe(4000);
  expect(early.failure.nonRetryable).toBe(false);
  expect(early.failure.nextRetryDelay).toBe(4000);
  expect(early.failure.type).toBe('model_unavailable');
  const near = boundedModelFailure(down(), 8, 118_500, 120_000);
  expect(near.retryInMs).toBe(1500);
});

test('at the bound: final, with how long and how many attempts, and the last error', () => {
  const r = boundedModelFailure(down(), 9, 120_000, 120_000);
  expect(r.retryInMs).toBeUndefined();
  expect(r.failure.nonRetryable).toBe(true);
  expect(r.failure.type).toBe('model_unavailable');
  expect(r.failure.message).toBe(
    'the model provider stayed unavailable for 120 s over 9 attempts (MODEL_UNAVAILABLE_AFTER_MS); last error: the model is unavailable (HTTP 503): busy',
  );
  // Something that is not the provider being down (a bug in the call) keeps its own type.
  const bug = boundedModelFailure(
    ApplicationFailure.retryable('the model call failed (TypeError): x', 'ModelCallError'),
    9,
    130_000,
    120_000,
  );
  expect(bug.failure.type).toBe('ModelCallError');
  expect(bug.failure.message).toMatch(/^the model call kept failing for 130 s/);
});

test("non-retryable failures and the worker's own (its token thread) are left to the retry policy as they are", () => {
  const bad = ApplicationFailure.nonRetryable('the model rejected the request (HTTP 400)', 'ModelBadRequest');
  expect(boundedModelFailure(bad, 1, 999_999, 120_000).failure).toBe(bad);
  const thread = ApplicationFailure.retryable('token thread exited', 'WorkerTokenThread');
  expect(boundedModelFailure(thread, 4, 999_999, 120_000)).toEqual({ failure: thread });
});
