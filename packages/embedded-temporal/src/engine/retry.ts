// Retry policies as the server applies them, for activities and workflows alike.
import { RetryState, TimeoutType, durFromMs, msFromDur } from '../proto';
import { invalidArgument } from '../errors';
import type { Failure, RetryPolicy } from './state';

/** Prefix that lets a retry policy name timeout kinds among its non-retryable error types. */
export const TIMEOUT_FAILURE_TYPE_PREFIX = 'TemporalTimeout:';

const TIMEOUT_NAMES: Record<string, number> = {
  StartToClose: TimeoutType.START_TO_CLOSE,
  ScheduleToStart: TimeoutType.SCHEDULE_TO_START,
  ScheduleToClose: TimeoutType.SCHEDULE_TO_CLOSE,
  Heartbeat: TimeoutType.HEARTBEAT,
};

/** The server's short name of a timeout type, as used in failure messages and "TemporalTimeout:" types. */
export function timeoutTypeName(t: number): string {
  return Object.keys(TIMEOUT_NAMES).find((k) => TIMEOUT_NAMES[k] === t) ?? 'Unspecified';
}

/** Fills defaults like the real server; throws INVALID_ARGUMENT on nonsense. */
export function normalizeRetryPolicy(wire: any, what: string): RetryPolicy {
  const initialIntervalMs = msFromDur(wire?.initialInterval) || 1000;
  const backoffCoefficient = wire?.backoffCoefficient || 2;
  const maximumIntervalMs = msFromDur(wire?.maximumInterval) || 100 * initialIntervalMs;
  const maximumAttempts = wire?.maximumAttempts ?? 0;
  const nonRetryableErrorTypes: string[] = wire?.nonRetryableErrorTypes ?? [];
  // A single attempt never retries, so the real server does not look at the rest.
  if (maximumAttempts !== 1) {
    if (initialIntervalMs < 0) throw invalidArgument(`${what}: InitialInterval cannot be negative.`);
    if (backoffCoefficient < 1) throw invalidArgument(`${what}: BackoffCoefficient cannot be less than 1.`);
    if (maximumIntervalMs < initialIntervalMs)
      throw invalidArgument(`${what}: MaximumInterval cannot be less than InitialInterval.`);
    if (maximumAttempts < 0) throw invalidArgument(`${what}: MaximumAttempts cannot be negative.`);
    for (const t of nonRetryableErrorTypes) {
      if (!t.startsWith(TIMEOUT_FAILURE_TYPE_PREFIX)) continue;
      const name = t.slice(TIMEOUT_FAILURE_TYPE_PREFIX.length);
      if (!(name in TIMEOUT_NAMES)) throw invalidArgument(`${what}: Invalid timeout type value: ${name}.`);
    }
  }
  return { initialIntervalMs, backoffCoefficient, maximumIntervalMs, maximumAttempts, nonRetryableErrorTypes };
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

/** Whether a failure may be retried at all under the given non-retryable types. */
export function isRetryableFailure(failure: Failure | undefined, nonRetryableTypes: string[]): boolean {
  if (!failure) return true;
  if (failure.terminatedFailureInfo || failure.canceledFailureInfo) return false;
  const timeout = failure.timeoutFailureInfo;
  if (timeout) {
    const t = timeout.timeoutType;
    if (t === TimeoutType.START_TO_CLOSE || t === TimeoutType.HEARTBEAT) {
      return !nonRetryableTypes.includes(TIMEOUT_FAILURE_TYPE_PREFIX + timeoutTypeName(t));
    }
    return false;
  }
  if (failure.serverFailureInfo) return !failure.serverFailureInfo.nonRetryable;
  const app = failure.applicationFailureInfo;
  if (app) return !app.nonRetryable && !nonRetryableTypes.includes(app.type ?? '');
  return true;
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; state: number };

/**
 * Whether attempt `attempt` (which just failed with `failure`) gets another try,
 * and after how long. `expiration` (epoch ms, 0 = none) bounds the retries: a
 * retry that would start after it is not made (RETRY_STATE_TIMEOUT).
 */
export function decideRetry(
  policy: RetryPolicy | undefined,
  attempt: number,
  failure: Failure | undefined,
  now: number,
  expiration: number,
): RetryDecision {
  if (!policy) return { retry: false, state: RetryState.RETRY_POLICY_NOT_SET };
  if (!isRetryableFailure(failure, policy.nonRetryableErrorTypes))
    return { retry: false, state: RetryState.NON_RETRYABLE_FAILURE };
  if (policy.maximumAttempts > 0 && Math.max(attempt, 1) >= policy.maximumAttempts)
    return { retry: false, state: RetryState.MAXIMUM_ATTEMPTS_REACHED };
  // An explicit delay from the failing code replaces the computed backoff, maximum interval included.
  const explicit = failure?.applicationFailureInfo?.nextRetryDelay;
  let delayMs: number;
  if (explicit) delayMs = msFromDur(explicit);
  else {
    delayMs = policy.initialIntervalMs * Math.pow(policy.backoffCoefficient, Math.max(attempt, 1) - 1);
    if (policy.maximumIntervalMs > 0 && (delayMs <= 0 || delayMs > policy.maximumIntervalMs))
      delayMs = policy.maximumIntervalMs;
  }
  if (!(delayMs > 0) && !explicit) return { retry: false, state: RetryState.TIMEOUT };
  delayMs = Math.max(0, Math.floor(delayMs));
  if (expiration > 0 && now + delayMs > expiration) return { retry: false, state: RetryState.TIMEOUT };
  return { retry: true, delayMs };
}
