import { decideRetry, isRetryableFailure, normalizeRetryPolicy, retryPolicyToWire } from '../../src/engine/retry';
import { RetryState, TimeoutType, msFromDur } from '../../src/proto';

const NOW = 1_700_000_000_000;
const appFailure = (extra: object = {}) => ({ message: 'boom', applicationFailureInfo: { type: 'Err', ...extra } });

describe('normalizeRetryPolicy', () => {
  test('fills the server defaults: 1 s initial, coefficient 2, maximum 100x initial, unlimited attempts', () => {
    const p = normalizeRetryPolicy({}, 'RetryPolicy');
    expect(p).toEqual({
      initialIntervalMs: 1000,
      backoffCoefficient: 2,
      maximumIntervalMs: 100_000,
      maximumAttempts: 0,
      nonRetryableErrorTypes: [],
    });
    expect(normalizeRetryPolicy({ initialInterval: { seconds: 3 } }, 'R').maximumIntervalMs).toBe(300_000);
  });

  test('keeps what is set and round-trips to the wire', () => {
    const p = normalizeRetryPolicy(
      {
        initialInterval: { seconds: 2 },
        backoffCoefficient: 3,
        maximumInterval: { seconds: 10 },
        maximumAttempts: 4,
        nonRetryableErrorTypes: ['X'],
      },
      'R',
    );
    expect(p).toEqual({
      initialIntervalMs: 2000,
      backoffCoefficient: 3,
      maximumIntervalMs: 10_000,
      maximumAttempts: 4,
      nonRetryableErrorTypes: ['X'],
    });
    const w: any = retryPolicyToWire(p);
    expect(msFromDur(w.initialInterval)).toBe(2000);
    expect(msFromDur(w.maximumInterval)).toBe(10_000);
    expect(w.backoffCoefficient).toBe(3);
    expect(w.maximumAttempts).toBe(4);
  });

  test('rejects nonsense, except with a single attempt where the rest does not matter', () => {
    expect(() => normalizeRetryPolicy({ backoffCoefficient: 0.5 }, 'R')).toThrow(/BackoffCoefficient/);
    expect(() =>
      normalizeRetryPolicy({ initialInterval: { seconds: 10 }, maximumInterval: { seconds: 5 } }, 'R'),
    ).toThrow(/MaximumInterval/);
    expect(() => normalizeRetryPolicy({ maximumAttempts: -1 }, 'R')).toThrow(/MaximumAttempts/);
    expect(() => normalizeRetryPolicy({ nonRetryableErrorTypes: ['TemporalTimeout:Sometimes'] }, 'R')).toThrow(
      /timeout type/,
    );
    expect(normalizeRetryPolicy({ maximumAttempts: 1, backoffCoefficient: 0.5 }, 'R').maximumAttempts).toBe(1);
  });
});

describe('isRetryableFailure', () => {
  test('cancellation, termination and schedule timeouts are never retried', () => {
    expect(isRetryableFailure({ canceledFailureInfo: {} }, [])).toBe(false);
    expect(isRetryableFailure({ terminatedFailureInfo: {} }, [])).toBe(false);
    expect(isRetryableFailure({ timeoutFailureInfo: { timeoutType: TimeoutType.SCHEDULE_TO_START } }, [])).toBe(false);
    expect(isRetryableFailure({ timeoutFailureInfo: { timeoutType: TimeoutType.SCHEDULE_TO_CLOSE } }, [])).toBe(false);
  });

  test('start-to-close and heartbeat timeouts retry unless listed as TemporalTimeout:<type>', () => {
    const st2c = { timeoutFailureInfo: { timeoutType: TimeoutType.START_TO_CLOSE } };
    const hb = { timeoutFailureInfo: { timeoutType: TimeoutType.HEARTBEAT } };
    expect(isRetryableFailure(st2c, [])).toBe(true);
    expect(isRetryableFailure(hb, [])).toBe(true);
    expect(isRetryableFailure(st2c, ['TemporalTimeout:StartToClose'])).toBe(false);
    expect(isRetryableFailure(hb, ['TemporalTimeout:StartToClose'])).toBe(true);
    expect(isRetryableFailure(hb, ['TemporalTimeout:Heartbeat'])).toBe(false);
  });

  test('application failures: nonRetryable flag and listed types', () => {
    expect(isRetryableFailure(appFailure(), [])).toBe(true);
    expect(isRetryableFailure(appFailure({ nonRetryable: true }), [])).toBe(false);
    expect(isRetryableFailure(appFailure(), ['Err'])).toBe(false);
    expect(isRetryableFailure({ serverFailureInfo: { nonRetryable: true } }, [])).toBe(false);
    expect(isRetryableFailure(undefined, [])).toBe(true);
  });
});

describe('decideRetry', () => {
  const policy = normalizeRetryPolicy(
    { initialInterval: { seconds: 1 }, backoffCoefficient: 2, maximumInterval: { seconds: 5 } },
    'R',
  );

  test('exponential backoff capped at the maximum interval', () => {
    const delays = [1, 2, 3, 4, 5].map((attempt) => {
      const d = decideRetry(policy, attempt, appFailure(), NOW, 0);
      return d.retry ? d.delayMs : -1;
    });
    expect(delays).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  test('maximum attempts counts the first attempt', () => {
    const p = { ...policy, maximumAttempts: 3 };
    expect(decideRetry(p, 2, appFailure(), NOW, 0)).toEqual({ retry: true, delayMs: 2000 });
    expect(decideRetry(p, 3, appFailure(), NOW, 0)).toEqual({
      retry: false,
      state: RetryState.MAXIMUM_ATTEMPTS_REACHED,
    });
  });

  test('non-retryable failures win over maximum attempts', () => {
    const p = { ...policy, maximumAttempts: 1, nonRetryableErrorTypes: ['Err'] };
    expect(decideRetry(p, 1, appFailure(), NOW, 0)).toEqual({ retry: false, state: RetryState.NON_RETRYABLE_FAILURE });
  });

  test('nextRetryDelay replaces the backoff, maximum interval included', () => {
    const d = decideRetry(policy, 1, appFailure({ nextRetryDelay: { seconds: 30 } }), NOW, 0);
    expect(d).toEqual({ retry: true, delayMs: 30_000 });
  });

  test('a retry that would start after the expiration is not made', () => {
    expect(decideRetry(policy, 1, appFailure(), NOW, NOW + 1000)).toEqual({ retry: true, delayMs: 1000 });
    expect(decideRetry(policy, 1, appFailure(), NOW, NOW + 999)).toEqual({ retry: false, state: RetryState.TIMEOUT });
  });

  test('no policy means no retry', () => {
    expect(decideRetry(undefined, 1, appFailure(), NOW, 0)).toEqual({
      retry: false,
      state: RetryState.RETRY_POLICY_NOT_SET,
    });
  });
});
