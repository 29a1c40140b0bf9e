// How long a model turn keeps trying a provider that is down. Temporal retries
// the turn (the workflow's retry policy); the activity picks each attempt's
// delay itself (nextRetryDelay) so that the waiting stays within
// MODEL_UNAVAILABLE_AFTER_MS, counted from the turn's first attempt, after
// which the run ends with agent_error `model_unavailable` instead of waiting on.
import { ApplicationFailure } from '@temporalio/common';

/** Failures that are the worker's own, not the provider's: the retry policy alone governs them. */
const NOT_THE_PROVIDER = new Set(['WorkerTokenThread']);
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

/** The wait before attempt `attempt + 1`: 1 s, doubling, at most 30 s. */
export function modelRetryDelayMs(attempt: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, attempt - 1));
}

export interface BoundedFailure {
  failure: ApplicationFailure;
  /** Set when Temporal retries the turn: the wait the failure asks for. */
  retryInMs?: number;
}

/**
 * The failure an attempt ends with, `elapsedMs` after the turn's first attempt
 * was scheduled: retried after its backoff (shortened so the next attempt
 * starts within the bound), or, past the bound, final.
 */
export function boundedModelFailure(
  failure: ApplicationFailure,
  attempt: number,
  elapsedMs: number,
  boundMs: number,
): BoundedFailure {
  if (failure.nonRetryable || NOT_THE_PROVIDER.has(failure.type ?? '')) return { failure };
  const type = failure.type ?? 'ModelCallError';
  if (elapsedMs >= boundMs) {
    const secs = Math.round(elapsedMs / 1000);
    const what = type === 'model_unavailable' ? 'the model provider stayed unavailable' : 'the model call kept failing';
    const message = `${what} for ${secs} s over ${attempt} attempt${attempt === 1 ? '' : 's'} (MODEL_UNAVAILABLE_AFTER_MS); last error: ${failure.message}`;
    return { failure: ApplicationFailure.create({ message, type, nonRetryable: true }) };
  }
  const retryInMs = Math.max(0, Math.min(modelRetryDelayMs(attempt), boundMs - elapsedMs));
  return {
    failure: ApplicationFailure.create({ message: failure.message, type, nextRetryDelay: retryInMs }),
    retryInMs,
  };
}
