// Activities through the SDK: timeout deduction and enforcement, server-side
// retries, heartbeats, cancellation, async and by-id completion, local activities.
import type { Duration } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { ActivityNotFoundError, WorkflowHandle } from '@temporalio/client';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import {
  runActivities,
  runActivity,
  cancelActivityAfter,
  runLocalActivity,
  Step,
  Outcome,
} from './workflows/activities';
import * as activities from './activities/activities';

const ET = temporal.api.enums.v1.EventType;
const RS = temporal.api.enums.v1.RetryState;
const TT = temporal.api.enums.v1.TimeoutType;
type Event = temporal.api.history.v1.IHistoryEvent;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/activities'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

const ms = (d: unknown) => (d ? tsToMs(d as any) : 0);
const events = async (h: WorkflowHandle) => (await h.fetchHistory()).events as Event[];
const ofType = (evs: Event[], t: number) => evs.filter((e) => e.eventType === t);
const activityEvents = (evs: Event[]) =>
  evs
    .filter(
      (e) =>
        e.eventType! >= ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.eventType! <= ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    )
    .map((e) => e.eventType);
const seen = (id: string) => activities.attempts.get(id) ?? [];

/** Runs one workflow to completion with a worker; returns its result, handle and history. */
async function run<T>(
  wf: (...a: any[]) => Promise<T>,
  args: unknown[],
  opts: { id?: string; runTimeout?: Duration; taskTimeout?: Duration } = {},
) {
  const id = opts.id ?? uid('act');
  return env.withWorker(async () => {
    const h = await env.client.workflow.start(wf, {
      args: args as any,
      taskQueue: env.taskQueue,
      workflowId: id,
      workflowRunTimeout: opts.runTimeout,
      workflowTaskTimeout: opts.taskTimeout,
    });
    const result = (await h.result()) as T;
    await env.replay(h);
    return { id, h, result, evs: await events(h) };
  });
}

const step = (name: Step['name'], options: Step['options'], args: unknown[] = []): Step => ({ name, args, options });
const noRetry = { maximumAttempts: 1 };

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

describe('cancellation', () => {
  test('of a running activity is delivered through its heartbeats', async () => {
    const s = step('heartbeatUntilCancelled', {
      startToCloseTimeout: '30s',
      heartbeatTimeout: '1s',
      cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    });
    const { id, result, evs } = await run(cancelActivityAfter, [s, 500]);
    expect(result.failure).toMatchObject({ kind: 'ActivityFailure', cause: { kind: 'CancelledFailure' } });
    expect(seen(id)[0].cancelled).toBe(true);
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    ]);
    const canceled = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED)[0].activityTaskCanceledEventAttributes!;
    const requested = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED)[0];
    expect(Number(canceled.latestCancelRequestedEventId)).toBe(Number(requested.eventId));
  });

  test('a cancelled activity that fails instead is not retried (CANCEL_REQUESTED)', async () => {
    const s = step('failWhenCancelled', {
      startToCloseTimeout: '30s',
      heartbeatTimeout: '1s',
      retry: { initialInterval: '100ms' },
      cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    });
    const { id, result, evs } = await run(cancelActivityAfter, [s, 500]);
    expect(seen(id).map((r) => r.attempt)).toEqual([1]);
    expect(result.failure).toMatchObject({ kind: 'ActivityFailure' });
    const failed = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_FAILED)[0].activityTaskFailedEventAttributes!;
    expect(failed.retryState).toBe(RS.RETRY_STATE_CANCEL_REQUESTED);
    expect(failed.failure?.message).toBe('failed instead of cancelling');
  });

  test('of a queued activity happens at once', async () => {
    const s = step('noop', {
      taskQueue: `${env.taskQueue}-nobody`,
      startToCloseTimeout: '30s',
      cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    });
    const { result, evs } = await run(cancelActivityAfter, [s, 300]);
    expect(result.failure).toMatchObject({ kind: 'ActivityFailure', cause: { kind: 'CancelledFailure' } });
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    ]);
    // Both events come from the one workflow task completion that asked for the cancel.
    const req = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED)[0];
    const done = ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED)[0];
    expect(Number(done.eventId)).toBe(Number(req.eventId) + 1);
  });

  test('of a queued activity, sent with other commands, keeps the command order', async () => {
    const s = step('noop', {
      taskQueue: `${env.taskQueue}-nobody`,
      startToCloseTimeout: '30s',
      cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    });
    const { result, evs } = await run(cancelActivityAfter, [s, 300, 200]);
    expect(result.failure).toMatchObject({ kind: 'ActivityFailure', cause: { kind: 'CancelledFailure' } });
    const at = evs.findIndex((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED);
    // The real server buffers the canceled outcome while it applies the commands and
    // writes it after their events; the next workflow task comes after that.
    expect(evs.slice(at, at + 4).map((e) => e.eventType)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      ET.EVENT_TYPE_TIMER_STARTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ]);
  });

  test('of an activity waiting out its retry backoff happens at once', async () => {
    // The backoff is an hour: a cancel that waited for it would keep the test past jest's timeout.
    const s = step(
      'failTimes',
      { startToCloseTimeout: '30s', retry: { initialInterval: '1h' }, cancellationType: 'WAIT_CANCELLATION_COMPLETED' },
      [99],
    );
    const { id, result, evs } = await run(cancelActivityAfter, [s, 1000]);
    expect(seen(id).map((r) => r.attempt)).toEqual([1]);
    expect(result.failure).toMatchObject({ kind: 'ActivityFailure', cause: { kind: 'CancelledFailure' } });
    expect(activityEvents(evs)).toEqual([
      ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED,
      ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    ]);
  });
});

/** Waits until the activity of workflow `id` handed its completion over (it is running). */
function tokenOf(id: string): Promise<Uint8Array> {
  return waitUntil(`the activity of ${id} to start and hand over its token`, () => activities.asyncTokens.get(id));
}

/** Starts a workflow under a worker and hands its handle to `fn`; replays it afterwards. */
async function withStarted<T>(
  wf: (...a: any[]) => Promise<unknown>,
  args: unknown[],
  fn: (h: WorkflowHandle, id: string) => Promise<T>,
): Promise<T> {
  const id = uid('async');
  return env.withWorker(async () => {
    const h = await env.client.workflow.start(wf, { args: args as any, taskQueue: env.taskQueue, workflowId: id });
    const out = await fn(h, id);
    await env.replay(h);
    return out;
  });
}

describe('async completion and by-id calls', () => {
  test('task-token completion; a second completion with the same token is NOT_FOUND', async () => {
    await withStarted(runActivity, [step('completeLater', { startToCloseTimeout: '30s' })], async (h, id) => {
      const token = await tokenOf(id);
      await env.client.activity.heartbeat(token, 'beat');
      await env.client.activity.complete(token, 'done-by-token');
      expect(((await h.result()) as Outcome).ok).toBe('done-by-token');
      await expect(env.client.activity.complete(token, 'again')).rejects.toBeInstanceOf(ActivityNotFoundError);
    });
  });

  test('a token from an attempt that timed out is stale', async () => {
    const s = step('completeLater', {
      startToCloseTimeout: '1s',
      retry: { initialInterval: '100ms', maximumAttempts: 2 },
    });
    await withStarted(runActivity, [s], async (h, id) => {
      const first = await tokenOf(id);
      activities.asyncTokens.delete(id);
      const second = await tokenOf(id);
      await expect(env.client.activity.complete(first, 'late')).rejects.toBeInstanceOf(ActivityNotFoundError);
      await env.client.activity.complete(second, 'second');
      expect(((await h.result()) as Outcome).ok).toBe('second');
      expect(seen(id).map((r) => r.attempt)).toEqual([1, 2]);
    });
  });

  test('by id: heartbeat, complete; completing again is NOT_FOUND', async () => {
    await withStarted(
      runActivity,
      [step('completeLater', { activityId: 'by-id', startToCloseTimeout: '30s' })],
      async (h, id) => {
        await tokenOf(id);
        const full = { workflowId: id, activityId: 'by-id' };
        await env.client.activity.heartbeat(full, 'beat');
        await env.client.activity.complete(full, 'done-by-id');
        expect(((await h.result()) as Outcome).ok).toBe('done-by-id');
        await expect(env.client.activity.complete(full, 'again')).rejects.toBeInstanceOf(ActivityNotFoundError);
      },
    );
  });

  test('by id: fail ends the activity with that failure', async () => {
    const s = step('completeLater', { activityId: 'by-id', startToCloseTimeout: '30s', retry: noRetry });
    await withStarted(runActivity, [s], async (h, id) => {
      await tokenOf(id);
      await env.client.activity.fail({ workflowId: id, activityId: 'by-id' }, new Error('failed by id'));
      const out = (await h.result()) as Outcome;
      expect(out.failure).toMatchObject({
        kind: 'ActivityFailure',
        retryState: 'MAXIMUM_ATTEMPTS_REACHED',
        cause: { message: 'failed by id' },
      });
    });
  });

  test('by id: completing an activity no worker has picked up records a started event for it', async () => {
    const s = step('noop', { activityId: 'queued', taskQueue: `${env.taskQueue}-nobody`, startToCloseTimeout: '30s' });
    await withStarted(runActivity, [s], async (h, id) => {
      // Wait for the scheduled event so the activity exists.
      await waitUntil(
        'the activity to be scheduled',
        () => events(h),
        (evs) => ofType(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length > 0,
      );
      await expect(env.client.activity.heartbeat({ workflowId: id, activityId: 'queued' })).rejects.toBeInstanceOf(
        ActivityNotFoundError,
      );
      await env.client.activity.complete({ workflowId: id, activityId: 'queued' }, 'forced');
      expect(((await h.result()) as Outcome).ok).toBe('forced');
      expect(activityEvents(await events(h))).toEqual([
        ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
        ET.EVENT_TYPE_ACTIVITY_TASK_STARTED,
        ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
      ]);
    });
  });

  test('by id: an unknown activity is NOT_FOUND', async () => {
    await withStarted(
      runActivity,
      [step('completeLater', { activityId: 'real', startToCloseTimeout: '30s' })],
      async (h, id) => {
        await tokenOf(id);
        await expect(env.client.activity.complete({ workflowId: id, activityId: 'nope' }, 1)).rejects.toBeInstanceOf(
          ActivityNotFoundError,
        );
        await env.client.activity.complete({ workflowId: id, activityId: 'real' }, 'fine');
        await h.result();
      },
    );
  });
});

describe('local activities', () => {
  test('run in the worker and leave a marker', async () => {
    const { result, evs } = await run(runLocalActivity, [
      'failTimes',
      [2],
      { startToCloseTimeout: '10s', retry: { initialInterval: '50ms' } },
    ]);
    expect(result.ok).toBe(3);
    const markers = ofType(evs, ET.EVENT_TYPE_MARKER_RECORDED);
    expect(markers).toHaveLength(1);
    expect(markers[0].markerRecordedEventAttributes!.markerName).toBe('core_local_activity');
    expect(activityEvents(evs)).toEqual([]);
  });

  test('longer than the workflow task timeout: the SDK keeps the task alive', async () => {
    const { result, evs } = await run(runLocalActivity, ['sleepy', [3000], { startToCloseTimeout: '20s' }], {
      taskTimeout: '1s',
    });
    expect(result.ok).toBe('slept');
    expect(ofType(evs, ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)).toHaveLength(0);
    expect(ofType(evs, ET.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toHaveLength(0);
    // The heartbeats are workflow task completions that force a new task.
    expect(ofType(evs, ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length).toBeGreaterThanOrEqual(3);
    expect(ofType(evs, ET.EVENT_TYPE_MARKER_RECORDED)).toHaveLength(1);
  });
});
