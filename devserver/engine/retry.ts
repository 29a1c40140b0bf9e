// Retry policies as the server applies them, for activities and workflows alike.
import { RetryState, durFromMs, msFromDur } from '../proto';
import { invalidArgument } from '../errors';
import type { Failure, RetryPolicy } from './state';

/** Fills defaults like the real server; throws INVALID_ARGUMENT on nonsense. */
export function normalizeRetryPolicy(wire: any, what: string): RetryPolicy {
  const initialIntervalMs = msFromDur(wire?.initialInterval) || 1000;
  const backoffCoefficient = wire?.backoffCoefficient || 2;
  const maximumIntervalMs = msFromDur(wire?.maximumInterval) || 100 * initialIntervalMs;
  const maximumAttempts = wire?.maximumAttempts ?? 0;
  if (initialIntervalMs < 0) throw invalidArgument(`${what}: InitialInterval cannot be negative.`);
  if (backoffCoefficient < 1) throw invalidArgument(`${what}: BackoffCoefficient cannot be less than 1.`);
  if (maximumIntervalMs < initialIntervalMs) throw invalidArgument(`${what}: MaximumInterval cannot be less than InitialInterval.`);
  if (maximumAttempts < 0) throw invalidArgument(`${what}: MaximumAttempts cannot be negative.`);
  return { initialIntervalMs, backoffCoefficient, maximumIntervalMs, maximumAttempts, nonRetryableErrorTypes: wire?.nonRetryableErrorTypes ?? [] };
}

export function retryPolicyToWire(p: RetryPolicy | undefined): object | undefined {
  if (!p) return undefined;
  return {
    initialInterval: durFromMs(p.initialIntervalMs),
    backoffCoefficient: p.backoffCoefficient,
    maximumInterval: durFromMs(p.maximumIntervalMs),
    maximumAttempts: p.maximumAttempts,
    nonRetryableErrorTypes: p.nonRetryableErrorTypes,
  };
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; state: number };

/**
 * Whether attempt `attempt` (which just failed with `failure`) gets another try,
 * and after how long. `expiration` (epoch ms, 0 = none) bounds the retries.
 */
export function decideRetry(policy: RetryPolicy | undefined, attempt: number, failure: Failure | undefined, now: number, expiration: number): RetryDecision {
  if (!policy) return { retry: false, state: RetryState.RETRY_POLICY_NOT_SET };
  const app = failure?.applicationFailureInfo;
  if (app?.nonRetryable) return { retry: false, state: RetryState.NON_RETRYABLE_FAILURE };
  if (app?.type && policy.nonRetryableErrorTypes.includes(app.type)) return { retry: false, state: RetryState.NON_RETRYABLE_FAILURE };
  if (failure?.canceledFailureInfo || failure?.terminatedFailureInfo) return { retry: false, state: RetryState.NON_RETRYABLE_FAILURE };
  const timeout = failure?.timeoutFailureInfo?.timeoutType;
  if (timeout === 2 /* SCHEDULE_TO_START */ || timeout === 3 /* SCHEDULE_TO_CLOSE */) return { retry: false, state: RetryState.TIMEOUT };
  if (policy.maximumAttempts > 0 && attempt >= policy.maximumAttempts) return { retry: false, state: RetryState.MAXIMUM_ATTEMPTS_REACHED };
  const explicit = app?.nextRetryDelay ? msFromDur(app.nextRetryDelay) : 0;
  const delayMs =
    explicit > 0 ? explicit : Math.min(policy.initialIntervalMs * Math.pow(policy.backoffCoefficient, attempt - 1), policy.maximumIntervalMs);
  if (expiration > 0 && now + delayMs >= expiration) return { retry: false, state: RetryState.TIMEOUT };
  return { retry: true, delayMs: Math.round(delayMs) };
}
