// Standalone activities (StartActivityExecution and the calls around it), on by
// default in current servers and served by the SDK's client.activity: started
// activities reach workers on their task queue like a workflow's, retry and
// time out by their own policy, are cancelled, terminated and deleted, and are
// found by poll, describe, list and count.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import {
  ActivityExecutionAlreadyStartedError,
  ActivityExecutionFailedError,
  ActivityNotFoundError,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, longPoll, uid } from './harness';
import { S, outcome } from './fuzz-tools';
import * as activities from './activities/standalone';

const RetryState = temporal.api.enums.v1.RetryState;
const WORKER = 'standalone-worker';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/update-with-start'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

const ws = () => env.connection.workflowService;
const secs = (n: number) => ({ seconds: Long.fromNumber(n) });
const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });
const decoded = (p: temporal.api.common.v1.IPayloads | null | undefined) =>
  defaultPayloadConverter.fromPayload(p!.payloads![0] as never);

/** A raw start of `echo` on a queue nobody polls unless the test does. */
function startRequest(patch: Record<string, unknown> = {}) {
  return {
    namespace: env.namespace,
    activityId: uid('standalone'),
    activityType: { name: 'echo' },
    taskQueue: { name: `unpolled-${randomUUID()}` },
    input: payloads('raw'),
    startToCloseTimeout: secs(30),
    requestId: randomUUID(),
    identity: 'starter',
    ...patch,
  };
}

const pollOutcome = (activityId: string) =>
  env.connection.withDeadline(Date.now() + 30_000, () =>
    ws().pollActivityExecution({ namespace: env.namespace, activityId }),
  );

test('the namespace advertises standalone activities', async () => {
  const caps = (await ws().describeNamespace({ namespace: env.namespace })).namespaceInfo?.capabilities;
  expect([caps?.standaloneActivities, caps?.standaloneActivityStartDelay]).toEqual([true, true]);
});

test('a started activity runs on a worker of its queue; its result comes by poll and describe', async () => {
  await env.withWorker(
    async () => {
      const id = uid('echo');
      expect(
        await env.client.activity.execute('echo', {
          id,
          taskQueue: env.taskQueue,
          args: ['hi'],
          startToCloseTimeout: '10s',
        }),
      ).toBe('hi:1:no workflow');
      const d = await env.client.activity.getHandle(id).describe({ includeOutcome: true, includeInput: true });
      expect([d.status, d.activityType, d.taskQueue, d.attempt, d.lastWorkerIdentity]).toEqual([
        'COMPLETED',
        'echo',
        env.taskQueue,
        1,
        WORKER,
      ]);
      expect(await d.getResult()).toBe('hi:1:no workflow');
      expect(await d.getInput()).toEqual(['hi']);
      expect(d.closeTime).toBeInstanceOf(Date);
    },
    { identity: WORKER },
  );
});

test('failed attempts are retried per the retry policy, until it gives up', async () => {
  await env.withWorker(async () => {
    const retry = { initialInterval: '50ms' } as const;
    expect(
      await env.client.activity.execute('flaky', {
        id: uid('flaky'),
        taskQueue: env.taskQueue,
        args: [2],
        startToCloseTimeout: '10s',
        retry,
      }),
    ).toBe(3);
    const id = uid('flaky-out');
    const err = await env.client.activity
      .execute('flaky', {
        id,
        taskQueue: env.taskQueue,
        args: [5],
        startToCloseTimeout: '10s',
        retry: { ...retry, maximumAttempts: 2 },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ActivityExecutionFailedError);
    expect(err.cause).toBeInstanceOf(ApplicationFailure);
    expect(err.cause.message).toBe('attempt 2 fails');
    const res = await pollOutcome(id);
    expect(res.outcome?.retryState).toBe(RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
    const d = await env.client.activity.getHandle(id).describe();
    expect([d.status, d.attempt]).toEqual(['FAILED', 2]);
  });
});

test('a queued activity is canceled at once, a running one once its worker reports it', async () => {
  const queued = startRequest();
  await ws().startActivityExecution(queued);
  const cancel = {
    namespace: env.namespace,
    activityId: queued.activityId,
    identity: 'canceller',
    reason: 'not needed',
    requestId: randomUUID(),
  };
  await ws().requestCancelActivityExecution(cancel);
  const failure = (await pollOutcome(queued.activityId)).outcome!.failure!;
  expect(failure.message).toBe('Activity canceled');
  expect(failure.canceledFailureInfo?.identity).toBe('canceller');
  expect(decoded(failure.canceledFailureInfo?.details)).toBe('not needed');
  const d = await env.client.activity.getHandle(queued.activityId).describe();
  expect([d.status, d.canceledReason]).toEqual(['CANCELED', 'not needed']);
  // The same request again is answered as the first was; another one is refused.
  await ws().requestCancelActivityExecution(cancel);
  const again = await outcome(ws().requestCancelActivityExecution({ ...cancel, requestId: randomUUID() }));
  expect([again.code, again.details]).toEqual([S.FAILED_PRECONDITION, 'activity is in terminal state Canceled']);

  await env.withWorker(async () => {
    const h = await env.client.activity.start('untilCancelled', {
      id: uid('running'),
      taskQueue: env.taskQueue,
      startToCloseTimeout: '30s',
      heartbeatTimeout: '5s',
    });
    await waitUntil(
      'the activity to be started',
      async () => (await h.describe()).runState,
      (state) => state === 'STARTED',
    );
    await h.cancel('stop now');
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(ActivityExecutionFailedError);
    expect(err.cause).toBeInstanceOf(CancelledFailure);
    expect((await h.describe()).status).toBe('CANCELED');
  });
});

test('terminate and delete', async () => {
  const req = startRequest();
  await ws().startActivityExecution(req);
  const terminate = {
    namespace: env.namespace,
    activityId: req.activityId,
    identity: 'terminator',
    reason: 'enough',
    requestId: randomUUID(),
  };
  await ws().terminateActivityExecution(terminate);
  const failure = (await pollOutcome(req.activityId)).outcome!.failure!;
  expect([failure.message, failure.terminatedFailureInfo?.identity]).toEqual(['enough', 'terminator']);
  expect((await env.client.activity.getHandle(req.activityId).describe()).status).toBe('TERMINATED');
  // Terminating again: the same request is a no-op, another one is refused.
  await ws().terminateActivityExecution(terminate);
  const again = await outcome(ws().terminateActivityExecution({ ...terminate, requestId: randomUUID() }));
  expect([again.code, again.details]).toEqual([
    S.FAILED_PRECONDITION,
    `already terminated with request ID ${terminate.requestId}`,
  ]);

  await ws().deleteActivityExecution({ namespace: env.namespace, activityId: req.activityId });
  // The real server deletes in the background: a describe right after may still find it (seen once
  // under load in a full run), so ask until it is gone.
  const describe = () =>
    outcome(ws().describeActivityExecution({ namespace: env.namespace, activityId: req.activityId }));
  const gone = await waitUntil('the deleted activity to be gone', describe, (o) => o.code !== S.OK);
  expect([gone.code, gone.details]).toEqual([S.NOT_FOUND, `activity not found for ID: ${req.activityId}`]);
  await expect(env.client.activity.getHandle(req.activityId).describe()).rejects.toBeInstanceOf(ActivityNotFoundError);
});

test('id reuse and conflict policies, and a retried start', async () => {
  const req = startRequest();
  const first = await ws().startActivityExecution(req);
  expect(first.started).toBe(true);
  const retried = await ws().startActivityExecution(req);
  expect([retried.runId, retried.started]).toEqual([first.runId, false]);
  const reused = await ws().startActivityExecution({
    ...req,
    requestId: randomUUID(),
    idConflictPolicy: temporal.api.enums.v1.ActivityIdConflictPolicy.ACTIVITY_ID_CONFLICT_POLICY_USE_EXISTING,
  });
  expect([reused.runId, reused.started]).toEqual([first.runId, false]);
  const opts = { id: req.activityId, taskQueue: req.taskQueue.name, startToCloseTimeout: '10s' } as const;
  const dup = await env.client.activity.start('echo', opts).catch((e) => e);
  expect(dup).toBeInstanceOf(ActivityExecutionAlreadyStartedError);
  expect(dup.runId).toBe(first.runId);

  await ws().terminateActivityExecution({
    namespace: env.namespace,
    activityId: req.activityId,
    requestId: randomUUID(),
  });
  const rejected = await env.client.activity
    .start('echo', { ...opts, idReusePolicy: 'REJECT_DUPLICATE' })
    .catch((e) => e);
  expect(rejected).toBeInstanceOf(ActivityExecutionAlreadyStartedError);
  // A terminated run counts as failed.
  const next = await env.client.activity.start('echo', { ...opts, idReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' });
  expect(next.runId).not.toBe(first.runId);
  await next.terminate('done');
});

test('schedule-to-start and start-to-close timeouts', async () => {
  const s2s = startRequest({ scheduleToStartTimeout: secs(1) });
  await ws().startActivityExecution(s2s);
  const st2c = startRequest({ startToCloseTimeout: secs(1), retryPolicy: { maximumAttempts: 1 } });
  await ws().startActivityExecution(st2c);
  const task = await longPoll(env, () =>
    ws().pollActivityTaskQueue({ namespace: env.namespace, taskQueue: st2c.taskQueue, identity: WORKER }),
  );
  expect([task.activityId, task.activityRunId, task.attempt, task.workflowNamespace]).toEqual([
    st2c.activityId,
    expect.any(String),
    1,
    env.namespace,
  ]);
  expect(decoded(task.input)).toBe('raw');

  const late = (await pollOutcome(s2s.activityId)).outcome!;
  expect([late.failure?.message, late.retryState]).toEqual([
    'activity ScheduleToStart timeout',
    RetryState.RETRY_STATE_TIMEOUT,
  ]);
  const slow = (await pollOutcome(st2c.activityId)).outcome!;
  expect([slow.failure?.message, slow.retryState]).toEqual([
    'activity StartToClose timeout',
    RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED,
  ]);
  const done = await outcome(
    ws().respondActivityTaskCompleted({
      namespace: env.namespace,
      taskToken: task.taskToken,
      result: payloads('late'),
    }),
  );
  expect(done.code).toBe(S.NOT_FOUND);
  expect((await env.client.activity.getHandle(st2c.activityId).describe()).status).toBe('TIMED_OUT');
});

test('list and count filter on ActivityType, ActivityId and ExecutionStatus', async () => {
  const activityType = { name: `listed-${randomUUID()}` };
  const a = startRequest({ activityType });
  const b = startRequest({ activityType });
  await ws().startActivityExecution(a);
  await ws().startActivityExecution(b);
  await ws().terminateActivityExecution({
    namespace: env.namespace,
    activityId: b.activityId,
    requestId: randomUUID(),
  });
  const ids = async (query: string) => {
    const res = await ws().listActivityExecutions({ namespace: env.namespace, query });
    return res.executions!.map((x) => x.activityId).sort();
  };
  const byType = `ActivityType = '${activityType.name}'`;
  expect(
    await waitUntil(
      'both activities to be listed',
      () => ids(byType),
      (listed) => listed.length === 2,
    ),
  ).toEqual([a.activityId, b.activityId].sort());
  expect(await ids(`${byType} AND ExecutionStatus = 'Running'`)).toEqual([a.activityId]);
  expect(await ids(`ActivityId = '${b.activityId}'`)).toEqual([b.activityId]);
  const count = await ws().countActivityExecutions({
    namespace: env.namespace,
    query: `${byType} AND ExecutionStatus = 'Terminated'`,
  });
  expect(Number(count.count)).toBe(1);
  await ws().terminateActivityExecution({
    namespace: env.namespace,
    activityId: a.activityId,
    requestId: randomUUID(),
  });
});

describe('refused requests', () => {
  const starts: [string, Record<string, unknown>, string | ((r: any) => string)][] = [
    ['no activity id', { activityId: '' }, 'activityId is not set'],
    ['no activity type', { activityType: undefined }, 'activityType is not set'],
    ['no task queue', { taskQueue: undefined }, 'taskQueue is not set'],
    [
      'no timeout',
      { startToCloseTimeout: undefined },
      (r) =>
        `a valid StartToCloseTimeout or ScheduleToCloseTimeout must be set on the activity. ActivityId=${r.activityId} ActivityType=echo`,
    ],
    ['a negative timeout', { startToCloseTimeout: secs(-1) }, 'invalid StartToCloseTimeout: negative duration'],
    [
      'a bad retry policy',
      { retryPolicy: { backoffCoefficient: 0.5 } },
      'BackoffCoefficient cannot be less than 1 on retry policy.',
    ],
  ];
  test.each(starts)('start with %s', async (_name, patch, message) => {
    const req = startRequest(patch);
    const res = await outcome(ws().startActivityExecution(req));
    expect([res.code, res.details]).toEqual([S.INVALID_ARGUMENT, typeof message === 'string' ? message : message(req)]);
  });

  test('describe or poll without an id, or of an unknown one', async () => {
    const noId = await outcome(ws().describeActivityExecution({ namespace: env.namespace, activityId: '' }));
    expect([noId.code, noId.details]).toEqual([S.INVALID_ARGUMENT, 'activity ID is required']);
    for (const call of [
      () => ws().describeActivityExecution({ namespace: env.namespace, activityId: 'nope' }),
      () => ws().pollActivityExecution({ namespace: env.namespace, activityId: 'nope' }),
    ]) {
      const res = await outcome(call());
      expect([res.code, res.details]).toEqual([S.NOT_FOUND, 'activity not found for ID: nope']);
    }
  });
});
