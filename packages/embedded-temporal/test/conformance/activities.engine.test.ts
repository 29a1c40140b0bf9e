// Activities through the SDK: timeout deduction and enforcement, server-side retries and
// heartbeats. Cancellation, async and by-id completion and local activities:
// activities-completion.engine.test.ts.
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { createEnv, Env } from './harness';
import { runActivities, runActivity, Outcome } from './workflows/activities';
import * as activities from './activities/activities';
import { activityEvents, ms, ofType, seen, step, workflowRunner } from './activities-helpers';

const ET = temporal.api.enums.v1.EventType;
const RS = temporal.api.enums.v1.RetryState;
const TT = temporal.api.enums.v1.TimeoutType;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/activities'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

const run = workflowRunner(() => env);

describe('timeouts the workflow leaves out are filled in like the real server', () => {
  test('without a run timeout', async () => {
    const steps = [
      step('noop', { activityId: 'a', startToCloseTimeout: '5s' }),
      step('noop', { activityId: 'b', scheduleToCloseTimeout: '10s' }),
      step('noop', {
        activityId: 'c',
        scheduleToCloseTimeout: '10s',
        startToCloseTimeout: '20s',
        scheduleToStartTimeout: '30s',
        heartbeatTimeout: '40s',
      }),
      step('noop', {
        activityId: 'd',
        startToCloseTimeout: '5s',
        heartbeatTimeout: '9s',
        retry: { initialInterval: '3s', maximumAttempts: 7 },
      }),
    ];
    const { result, evs } = await run(runActivities, [steps]);
    expect(result.map((o: Outcome) => o.ok)).toEqual(['ok', 'ok', 'ok', 'ok']);
    const sched = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).map(
      (e) => e.activityTaskScheduledEventAttributes!,
    );
    const timeouts = sched.map((a) => [
      a.activityId,
      ms(a.scheduleToCloseTimeout),
      ms(a.scheduleToStartTimeout),
      ms(a.startToCloseTimeout),
      ms(a.heartbeatTimeout),
    ]);
    expect(timeouts).toEqual([
      ['a', 0, 0, 5000, 0],
      ['b', 10_000, 10_000, 10_000, 0],
      ['c', 10_000, 10_000, 10_000, 10_000],
      ['d', 0, 0, 5000, 5000],
    ]);
    const retry = sched
      .map((a) => a.retryPolicy!)
      .map((p) => [ms(p.initialInterval), p.backoffCoefficient, ms(p.maximumInterval), p.maximumAttempts]);
    expect(retry).toEqual([
      [1000, 2, 100_000, 0],
      [1000, 2, 100_000, 0],
      [1000, 2, 100_000, 0],
      [3000, 2, 300_000, 7],
    ]);
  });

  test('bounded by the run timeout', async () => {
    const steps = [
      step('noop', { activityId: 'a', startToCloseTimeout: '5s' }),
      step('noop', { activityId: 'b', scheduleToCloseTimeout: '2m', heartbeatTimeout: '90s' }),
    ];
    const { evs } = await run(runActivities, [steps], { runTimeout: '1m' });
    const sched = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).map(
      (e) => e.activityTaskScheduledEventAttributes!,
    );
    expect(
      sched.map((a) => [
        ms(a.scheduleToCloseTimeout),
        ms(a.scheduleToStartTimeout),
        ms(a.startToCloseTimeout),
        ms(a.heartbeatTimeout),
      ]),
    ).toEqual([
      [60_000, 60_000, 5000, 0],
      [60_000, 60_000, 60_000, 60_000],
    ]);
  });
});

test("an activity's started event carries when a worker took it, not when the attempt ended", async () => {
  // The started event is written with the outcome (it is transient until then), but stamped with
  // the time the worker's poll took the task: the Web UI and any reader of the history time an
  // activity's queueing and its run from it.
  const { result, evs } = await run(runActivity, [step('sleepy', { startToCloseTimeout: '10s' }, [1500])]);
  expect(result.ok).toBe('slept');
  const at = (type: number) => tsToMs(ofType(evs, type)[0].eventTime);
  const scheduled = at(ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  const started = at(ET.EVENT_TYPE_ACTIVITY_TASK_STARTED);
  const completed = at(ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
  expect(started).toBeGreaterThanOrEqual(scheduled);
  // The attempt slept 1.5 s between the two.
  expect(completed - started).toBeGreaterThanOrEqual(1400);
});

describe('each timeout fires', () => {
  test('schedule-to-start: nobody polls the activity queue', async () => {
    const started = Date.now();
    const s = step('noop', {
      taskQueue: `${env.taskQueue}-nobody`,
      scheduleToStartTimeout: '1s',
      startToCloseTimeout: '5s',
    });
    const { result, evs } = await run(runActivity, [s]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(result.failure).toMatchObject({
      kind: 'ActivityFailure',
      retryState: 'TIMEOUT',
      cause: { kind: 'TimeoutFailure', timeoutType: 'SCHEDULE_TO_START' },
    });
    expect(activityEvents(evs)).toEqual([ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT]);
    const timedOut = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT)[0].activityTaskTimedOutEventAttributes!;
    expect(timedOut.retryState).toBe(RS.RETRY_STATE_TIMEOUT);
    expect(timedOut.failure?.timeoutFailureInfo?.timeoutType).toBe(TT.TIMEOUT_TYPE_SCHEDULE_TO_START);
  });

  test('start-to-close: retried, then MAXIMUM_ATTEMPTS_REACHED; the next attempt carries the last failure', async () => {
    const s = step(
      'sleepy',
      { startToCloseTimeout: '1s', retry: { initialInterval: '200ms', maximumAttempts: 2 } },
      [5000],
    );
    const { id, result, evs } = await run(runActivity, [s]);
    expect(seen(id).map((r) => r.attempt)).toEqual([1, 2]);
    expect(result.failure).toMatchObject({
      kind: 'ActivityFailure',
      retryState: 'MAXIMUM_ATTEMPTS_REACHED',
      cause: { kind: 'TimeoutFailure', timeoutType: 'START_TO_CLOSE' },
    });
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    ]);
    const startedEv = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_STARTED)[0].activityTaskStartedEventAttributes!;
    expect(startedEv.attempt).toBe(2);
    expect(startedEv.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(TT.TIMEOUT_TYPE_START_TO_CLOSE);
    const timedOut = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT)[0].activityTaskTimedOutEventAttributes!;
    expect(timedOut.retryState).toBe(RS.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
    expect(timedOut.failure?.timeoutFailureInfo?.timeoutType).toBe(TT.TIMEOUT_TYPE_START_TO_CLOSE);
  });

  test('schedule-to-close while running: TIMEOUT, no retry', async () => {
    const started = Date.now();
    const s = step('sleepy', { scheduleToCloseTimeout: '1500ms' }, [10_000]);
    const { id, result, evs } = await run(runActivity, [s]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(seen(id).map((r) => r.attempt)).toEqual([1]);
    expect(result.failure).toMatchObject({
      kind: 'ActivityFailure',
      retryState: 'TIMEOUT',
      cause: { kind: 'TimeoutFailure', timeoutType: 'SCHEDULE_TO_CLOSE' },
    });
    const timedOut = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT)[0].activityTaskTimedOutEventAttributes!;
    expect(timedOut.retryState).toBe(RS.RETRY_STATE_TIMEOUT);
    // Start-to-close equals schedule-to-close here; whichever timer the server handles
    // first, "no time left" is reported as the schedule-to-close deadline.
    expect(timedOut.failure?.timeoutFailureInfo?.timeoutType).toBe(TT.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE);
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    ]);
  });

  test('heartbeat: retried, details reach the next attempt and the final timeout failure', async () => {
    const s = step(
      'heartbeatThenStall',
      { startToCloseTimeout: '30s', heartbeatTimeout: '1s', retry: { initialInterval: '200ms', maximumAttempts: 2 } },
      [10_000],
    );
    const { id, result, evs } = await run(runActivity, [s]);
    expect(seen(id).map((r) => [r.attempt, r.heartbeatDetails])).toEqual([
      [1, undefined],
      [2, 'p1'],
    ]);
    expect(result.failure).toMatchObject({
      kind: 'ActivityFailure',
      retryState: 'MAXIMUM_ATTEMPTS_REACHED',
      cause: { kind: 'TimeoutFailure', timeoutType: 'HEARTBEAT', lastHeartbeatDetails: 'p2' },
    });
    const timedOut = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT)[0].activityTaskTimedOutEventAttributes!;
    expect(timedOut.failure?.timeoutFailureInfo?.timeoutType).toBe(TT.TIMEOUT_TYPE_HEARTBEAT);
  });
});

describe('server-side retries', () => {
  test('backoff grows by the coefficient up to the maximum interval; the activity sees each attempt', async () => {
    // 200 ms, then 200 s and 55 hours, both capped at 500 ms: four attempts take about 1.2 s, well
    // inside the 10 s schedule-to-close; a server that capped them at anything much above
    // maximumInterval (Temporal's default cap is 100 × the initial interval, 20 s) times out.
    const s = step(
      'failTimes',
      {
        startToCloseTimeout: '10s',
        scheduleToCloseTimeout: '10s',
        retry: { initialInterval: '200ms', backoffCoefficient: 1000, maximumInterval: '500ms' },
      },
      [3],
    );
    const { id, result, evs } = await run(runActivity, [s]);
    expect(result.ok).toBe(4);
    const rec = seen(id);
    expect(rec.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    const gaps = rec.slice(1).map((r, i) => r.at - rec[i].at);
    [200, 500, 500].forEach((want, i) => expect(gaps[i]).toBeGreaterThanOrEqual(want - 30));
    // The server's own times: all four attempts within the first uncapped backoff (200 s).
    const at = (t: number) => tsToMs(ofType(evs, t)[0].eventTime!);
    expect(at(ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - at(ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBeLessThan(200_000);
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    ]);
    const startedEv = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_STARTED)[0].activityTaskStartedEventAttributes!;
    expect(startedEv.attempt).toBe(4);
    expect(startedEv.lastFailure?.message).toBe('attempt 3 failed');
    expect(startedEv.lastFailure?.applicationFailureInfo?.type).toBe('Flaky');
  });

  test('maximum attempts: MAXIMUM_ATTEMPTS_REACHED with the last failure', async () => {
    const s = step(
      'failTimes',
      { startToCloseTimeout: '10s', retry: { initialInterval: '100ms', maximumAttempts: 3 } },
      [99],
    );
    const { id, result, evs } = await run(runActivity, [s]);
    expect(seen(id).map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(result.failure).toMatchObject({
      retryState: 'MAXIMUM_ATTEMPTS_REACHED',
      cause: { kind: 'ApplicationFailure', message: 'attempt 3 failed' },
    });
    const failed = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_FAILED)[0].activityTaskFailedEventAttributes!;
    expect(failed.retryState).toBe(RS.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
    expect(ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_STARTED)[0].activityTaskStartedEventAttributes!.attempt).toBe(3);
  });

  test('non-retryable error types and ApplicationFailure.nonRetryable stop at once', async () => {
    const steps = [
      step(
        'failTimes',
        { startToCloseTimeout: '10s', retry: { initialInterval: '100ms', nonRetryableErrorTypes: ['Fatal'] } },
        [99, { type: 'Fatal' }],
      ),
      step('throwNonRetryable', { startToCloseTimeout: '10s', retry: { initialInterval: '100ms' } }),
    ];
    const { id, result, evs } = await run(runActivities, [steps]);
    expect(seen(id).map((r) => r.attempt)).toEqual([1, 1]);
    expect(result[0].failure).toMatchObject({
      retryState: 'NON_RETRYABLE_FAILURE',
      cause: { type: 'Fatal', nonRetryable: false },
    });
    expect(result[1].failure).toMatchObject({
      retryState: 'NON_RETRYABLE_FAILURE',
      cause: { type: 'Fatal', nonRetryable: true },
    });
    expect(
      ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_FAILED).map((e) => e.activityTaskFailedEventAttributes!.retryState),
    ).toEqual([RS.RETRY_STATE_NON_RETRYABLE_FAILURE, RS.RETRY_STATE_NON_RETRYABLE_FAILURE]);
  });

  test('nextRetryDelay from the failure replaces the backoff', async () => {
    const s = step(
      'failTimes',
      { startToCloseTimeout: '10s', retry: { initialInterval: '50ms', maximumInterval: '100ms' } },
      [1, { nextRetryDelayMs: 1200 }],
    );
    const { id, result } = await run(runActivity, [s]);
    expect(result.ok).toBe(2);
    const rec = seen(id);
    expect(rec[1].at - rec[0].at).toBeGreaterThanOrEqual(1150);
  });

  test('schedule-to-close bounds the retries: a retry that cannot start in time is not made', async () => {
    const s = step(
      'failTimes',
      {
        scheduleToCloseTimeout: '5m',
        retry: { initialInterval: '1s', backoffCoefficient: 1000, maximumInterval: '1h' },
      },
      [99],
    );
    const { id, result, evs } = await run(runActivity, [s]);
    // Attempts at ~0 s and ~1 s; the next would start at ~1001 s, after the 5-minute deadline,
    // so the second failure ends the activity (a server that waited for the deadline would
    // keep the test past jest's timeout, and record a timeout rather than the failure).
    expect(seen(id).map((r) => r.attempt)).toEqual([1, 2]);
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    ]);
    const at = (t: number) => tsToMs(ofType(evs, t)[0].eventTime!);
    expect(at(ET.EVENT_TYPE_ACTIVITY_TASK_FAILED) - at(ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBeLessThan(5 * 60_000);
    expect(result.failure).toMatchObject({
      retryState: 'TIMEOUT',
      cause: { kind: 'ApplicationFailure', message: 'attempt 2 failed' },
    });
    expect(ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_FAILED)[0].activityTaskFailedEventAttributes!.retryState).toBe(
      RS.RETRY_STATE_TIMEOUT,
    );
  });

  test('heartbeat details survive a failed attempt', async () => {
    const s = step('heartbeatThenFail', { startToCloseTimeout: '10s', retry: { initialInterval: '100ms' } });
    const { result } = await run(runActivity, [s]);
    expect(result.ok).toBe('progress-1');
  });
});
