// Activities through the SDK: cancellation, async and by-id completion, local activities.
// Timeouts, retries and heartbeats: activities.engine.test.ts.
import { temporal } from '@temporalio/proto';
import { ActivityNotFoundError, WorkflowHandle } from '@temporalio/client';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import { runActivity, cancelActivityAfter, runLocalActivity, Outcome } from './workflows/activities';
import * as activities from './activities/activities';
import { activityEvents, events, noRetry, ofType, seen, step, workflowRunner } from './activities-helpers';

const ET = temporal.api.enums.v1.EventType;
const RS = temporal.api.enums.v1.RetryState;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/activities'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

const run = workflowRunner(() => env);

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
