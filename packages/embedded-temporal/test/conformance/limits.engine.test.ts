// Limits: payload sizes (blob and memo), history count and size (termination,
// continue-as-new suggestion) and the gRPC message size. The env's server gets
// lowered limits through the real server's dynamic-config keys, so a run breaks in a
// few events, and breaks the same way on both engines. The SDK's worker learns the
// blob limit from DescribeNamespace and checks its own completions against it; raw
// calls show what the server itself does with what reaches it.
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { Connection, WorkflowFailedError } from '@temporalio/client';
import * as activities from './activities/limits';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import { rawWorker, CT, ET } from './raw-worker';
import { activityLoop, bigActivity, bigResult, go, sized, untilSuggested, waiter } from './workflows/limits';

const LIMITS = {
  'limit.blobSize.error': 10_000,
  'limit.blobSize.warn': 5_000,
  'limit.memoSize.error': 3_000,
  'limit.historyCount.error': 200,
  'limit.historyCount.warn': 100,
  'limit.historySize.error': 60_000,
  'limit.historySize.warn': 30_000,
  'limit.historyCount.suggestContinueAsNew': 30,
  'limit.historySize.suggestContinueAsNew': 20_000,
};
const INVALID_ARGUMENT = 3;
const BLOB = 'Blob data size exceeds limit.';
const COUNT = 'Workflow history count exceeds limit.';
const SIZE = 'Workflow history size exceeds limit.';
const Cause = temporal.api.enums.v1.WorkflowTaskFailedCause;
const Reason = temporal.api.enums.v1.SuggestContinueAsNewReason;
const RetryState = temporal.api.enums.v1.RetryState;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let env: Env;
const raw = rawWorker(() => env);
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/limits'), activities, dynamicConfig: LIMITS });
});
afterAll(async () => {
  await env?.teardown();
});
const svc = () => env.connection.workflowService;
const bytes = (n: number) => ({ payloads: [{ data: Buffer.alloc(n) }] });
const lastEvent = async (workflowId: string) => (await raw.history(workflowId)).at(-1)!;
const startedEvents = async (workflowId: string) =>
  (await raw.history(workflowId)).filter((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_STARTED);

function expectTerminated(e: HistoryEvent, reason: string): void {
  expect(e.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
  expect(e.workflowExecutionTerminatedEventAttributes).toMatchObject({ reason, identity: 'history-service' });
}

test('DescribeNamespace advertises the blob and memo limits in force', async () => {
  const { limits } = (await svc().describeNamespace({ namespace: env.namespace })).namespaceInfo!;
  expect(Number(limits!.blobSizeLimitError)).toBe(10_000);
  expect(Number(limits!.memoSizeLimitError)).toBe(3_000);
});

test('a start past the blob limit (encoded size) or the memo limit is refused', async () => {
  const start = (extra: object) =>
    svc().startWorkflowExecution({
      namespace: env.namespace,
      workflowId: uid('start'),
      workflowType: { name: 'waiter' },
      taskQueue: { name: env.taskQueue },
      requestId: randomUUID(),
      ...extra,
    });
  // 9,990 data bytes encode to 9,996: within the limit; 9,996 encode to 10,002: past it.
  const ok = await start({ input: bytes(9_990) });
  expect(ok.started).toBe(true);
  await expect(start({ input: bytes(9_996) })).rejects.toMatchObject({ code: INVALID_ARGUMENT, details: BLOB });
  await expect(start({ memo: { fields: { m: { data: Buffer.alloc(4_000) } } } })).rejects.toMatchObject({
    code: INVALID_ARGUMENT,
    details: 'Memo size exceeds limit.',
  });
});

test('a signal past the blob limit is refused before its run is looked up; one past the warn limit only arrives', async () => {
  await expect(
    svc().signalWorkflowExecution({
      namespace: env.namespace,
      workflowExecution: { workflowId: uid('none') },
      signalName: 'go',
      input: bytes(20_000),
    }),
  ).rejects.toMatchObject({
    code: INVALID_ARGUMENT,
    details: BLOB,
  });
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(waiter, { taskQueue: env.taskQueue, workflowId: uid('signal') });
    await expect(h.signal(go, 's'.repeat(20_000))).rejects.toMatchObject({
      cause: { code: INVALID_ARGUMENT, details: BLOB },
    });
    await h.signal(go, 's'.repeat(6_000));
    expect(await h.result()).toBe(6_000);
    await env.replay(h);
  });
});

test('a request past 4 MiB is refused by gRPC itself (RESOURCE_EXHAUSTED); one under it meets the blob limit', async () => {
  // Without the client's retries (it retries RESOURCE_EXHAUSTED for half a minute).
  const connection = await Connection.connect({ address: env.address, interceptors: [] });
  try {
    const request = (n: number) => ({
      namespace: env.namespace,
      workflowExecution: { workflowId: 'w' },
      signalName: 'go',
      input: bytes(n),
    });
    const tooBig = request(5 * 1024 * 1024);
    // The size it names is the whole request's, encoded.
    const size = temporal.api.workflowservice.v1.SignalWorkflowExecutionRequest.encode(tooBig).finish().length;
    await expect(connection.workflowService.signalWorkflowExecution(tooBig)).rejects.toMatchObject({
      code: 8,
      details: `grpc: received message larger than max (${size} vs. 4194304)`,
    });
    await expect(
      connection.workflowService.signalWorkflowExecution(request(4 * 1024 * 1024 - 200)),
    ).rejects.toMatchObject({ code: INVALID_ARGUMENT, details: BLOB });
  } finally {
    await connection.close();
  }
});

test('a query whose arguments or answer are past the blob limit fails', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(waiter, { taskQueue: env.taskQueue, workflowId: uid('query') });
    expect(await h.query(sized, 100)).toHaveLength(100);
    await expect(h.query(sized, 20_000)).rejects.toMatchObject({ message: BLOB });
    const query = { queryType: 'sized', queryArgs: bytes(20_000) };
    await expect(
      svc().queryWorkflow({ namespace: env.namespace, execution: { workflowId: h.workflowId }, query }),
    ).rejects.toMatchObject({ code: INVALID_ARGUMENT, details: BLOB });
    await h.signal(go, '');
    await h.result();
    await env.replay(h);
  });
});

test('an activity result past the blob limit: the SDK worker fails the attempt itself (PayloadsTooLarge)', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(bigActivity, {
      taskQueue: env.taskQueue,
      workflowId: uid('activity'),
      args: [20_000],
    });
    expect(await h.result()).toEqual({
      failure: {
        message: 'Activity task failed',
        causeName: 'ApplicationFailure',
        cause: '[TMPRL1103] Attempted to upload payloads with size that exceeded the error limit.',
      },
    });
    const failed = (await raw.history(h.workflowId)).find(
      (e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    )!.activityTaskFailedEventAttributes!;
    expect(failed.failure?.applicationFailureInfo?.type).toBe('PayloadsTooLarge');
    expect(failed.retryState).toBe(RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED);
    await env.replay(h);
  });
});

test('an oversized activity result, heartbeat or failure reaching the server fails the activity, non-retryable', async () => {
  const tq = uid('tq');
  const { workflowId } = await raw.startRaw(tq);
  const schedule = (activityId: string) => ({
    commandType: CT.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
    scheduleActivityTaskCommandAttributes: {
      activityId,
      activityType: { name: 'x' },
      taskQueue: { name: tq },
      startToCloseTimeout: { seconds: 10 },
      retryPolicy: { maximumAttempts: 5 },
    },
  });
  await raw.complete(await raw.poll(tq), ['a', 'b', 'c'].map(schedule));
  const pollActivity = () =>
    env.connection.withDeadline(Date.now() + 10_000, () =>
      svc().pollActivityTaskQueue({ namespace: env.namespace, taskQueue: { name: tq }, identity: 'raw' }),
    );
  const a = await pollActivity();
  expect(
    await svc().respondActivityTaskCompleted({
      namespace: env.namespace,
      taskToken: a.taskToken,
      result: bytes(20_000),
    }),
  ).toEqual({});
  const b = await pollActivity();
  expect(
    (
      await svc().recordActivityTaskHeartbeat({
        namespace: env.namespace,
        taskToken: b.taskToken,
        details: bytes(20_000),
      })
    ).cancelRequested,
  ).toBe(true);
  const c = await pollActivity();
  const res = await svc().respondActivityTaskFailed({
    namespace: env.namespace,
    taskToken: c.taskToken,
    failure: { message: 'm'.repeat(20_000), applicationFailureInfo: { type: 'Big' } },
  });
  expect(res.failures?.map((f) => [f.message, f.serverFailureInfo?.nonRetryable])).toEqual([
    ['Failure exceeds size limit.', true],
  ]);
  const failures = await waitUntil('the three activity failures in the history', async () => {
    const events = (await raw.history(workflowId)).filter((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_FAILED);
    return events.length === 3 ? events.map((e) => e.activityTaskFailedEventAttributes!) : undefined;
  });
  expect(failures!.map((f) => [f.failure?.message, f.failure?.serverFailureInfo?.nonRetryable, f.retryState])).toEqual([
    ['Complete result exceeds size limit.', true, RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE],
    ['Heartbeat details exceed size limit.', true, RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE],
    ['Failure exceeds size limit.', true, RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE],
  ]);
  // The worker's own failure survives, cut down, as the cause.
  const kept = failures![2].failure!.cause!;
  expect(kept.applicationFailureInfo?.type).toBe('Big');
  expect(kept.message!.length).toBeLessThan(5_000);
  await raw.terminate(workflowId);
});

test('a workflow result past the blob limit: the SDK worker fails its task (PAYLOADS_TOO_LARGE), the run stays open', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(bigResult, {
      taskQueue: env.taskQueue,
      workflowId: uid('result'),
      args: [20_000],
    });
    const failed = await waitUntil('the workflow task to fail', async () =>
      (await raw.history(h.workflowId)).find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_FAILED),
    );
    expect(failed?.workflowTaskFailedEventAttributes?.cause).toBe(Cause.WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE);
    expect((await h.describe()).status.name).toBe('RUNNING');
    await h.terminate();
  });
});

test('a command past the blob limit reaching the server fails the task and terminates the run; on a retried task it is only refused', async () => {
  const tq = uid('tq');
  const first = await raw.startRaw(tq);
  const complete = {
    commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
    completeWorkflowExecutionCommandAttributes: { result: bytes(20_000) },
  };
  const message =
    'BadScheduleActivityAttributes: CompleteWorkflowExecutionCommandAttributes.Result exceeds size limit.';
  await expect(raw.complete(await raw.poll(tq), [complete])).rejects.toMatchObject({
    code: INVALID_ARGUMENT,
    details: message,
  });
  const [failed, terminated] = (await raw.history(first.workflowId)).slice(-2);
  expect(failed.workflowTaskFailedEventAttributes).toMatchObject({
    cause: Cause.WORKFLOW_TASK_FAILED_CAUSE_BAD_SCHEDULE_ACTIVITY_ATTRIBUTES,
    failure: { message, serverFailureInfo: {} },
  });
  expectTerminated(terminated, message);

  const second = await raw.startRaw(tq);
  await raw.fail(await raw.poll(tq));
  const retry = await raw.poll(tq);
  expect(retry.attempt).toBe(2);
  const schedule = {
    commandType: CT.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
    scheduleActivityTaskCommandAttributes: {
      activityId: 'a',
      activityType: { name: 'x' },
      taskQueue: { name: tq },
      startToCloseTimeout: { seconds: 10 },
      input: bytes(20_000),
    },
  };
  await expect(raw.complete(retry, [schedule])).rejects.toMatchObject({
    code: INVALID_ARGUMENT,
    details: 'BadScheduleActivityAttributes: ScheduleActivityTaskCommandAttributes.Input exceeds size limit.',
  });
  expect(
    (await svc().describeWorkflowExecution({ namespace: env.namespace, execution: { workflowId: second.workflowId } }))
      .workflowExecutionInfo?.status,
  ).toBe(1);
  await raw.terminate(second.workflowId);
});

test('a change taking a run past the history count limit is dropped and the run terminated instead', async () => {
  const { workflowId } = await raw.startRaw(uid('tq'));
  // Events 1-2 are the start; each signal adds one. A signal is counted only once written,
  // so the one writing event 201 passes, and the next finds 201 > 200.
  let refused = -1;
  for (let i = 0; i < 210 && refused < 0; i++) {
    await raw.signal(workflowId).catch((err) => {
      expect(err).toMatchObject({ code: INVALID_ARGUMENT, details: COUNT });
      refused = i;
    });
  }
  expect(refused).toBe(199);
  const events = await raw.history(workflowId);
  expect(events).toHaveLength(202);
  expectTerminated(events[201], COUNT);
  await expect(raw.signal(workflowId)).rejects.toMatchObject({
    code: 5,
    details: 'workflow execution already completed',
  });
});

test('a workflow looping past the history count limit is terminated', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(activityLoop, {
      taskQueue: env.taskQueue,
      workflowId: uid('count'),
      args: [1],
    });
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause).toMatchObject({ name: 'TerminatedFailure', message: COUNT });
    const last = await lastEvent(h.workflowId);
    expectTerminated(last, COUNT);
    expect(Number(last.eventId)).toBeGreaterThan(190);
    expect(Number(last.eventId)).toBeLessThanOrEqual(201);
    await env.replay(h);
  });
});

test('a workflow whose history grows past the history size limit is terminated', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(activityLoop, {
      taskQueue: env.taskQueue,
      workflowId: uid('size'),
      args: [8_000],
    });
    const err = await h.result().catch((e) => e);
    expect(err.cause).toMatchObject({ name: 'TerminatedFailure', message: SIZE });
    const last = await lastEvent(h.workflowId);
    expectTerminated(last, SIZE);
    // Eight-odd activities of 8 kB: far from the count limit.
    expect(Number(last.eventId)).toBeLessThan(80);
    const sizes = (await startedEvents(h.workflowId)).map((e) =>
      Number(e.workflowTaskStartedEventAttributes!.historySizeBytes),
    );
    expect(sizes.at(-1)).toBeGreaterThan(45_000);
    expect(sizes.at(-1)).toBeLessThanOrEqual(60_000);
    await env.replay(h);
  });
});

test('continue-as-new is suggested once the history reaches a suggest limit, saying which', async () => {
  await env.withWorker(async () => {
    const byCount = await env.client.workflow.start(untilSuggested, {
      taskQueue: env.taskQueue,
      workflowId: uid('suggest-count'),
      args: [1],
    });
    const counted = await byCount.result();
    expect(counted.historyLength).toBeGreaterThanOrEqual(30);
    expect(counted.historyLength).toBeLessThan(36);
    const countStarts = await startedEvents(byCount.workflowId);
    expect(countStarts.at(-1)!.workflowTaskStartedEventAttributes).toMatchObject({
      suggestContinueAsNew: true,
      suggestContinueAsNewReasons: [Reason.SUGGEST_CONTINUE_AS_NEW_REASON_TOO_MANY_HISTORY_EVENTS],
    });
    expect(countStarts.slice(0, -1).some((e) => e.workflowTaskStartedEventAttributes!.suggestContinueAsNew)).toBe(
      false,
    );
    await env.replay(byCount);

    const bySize = await env.client.workflow.start(untilSuggested, {
      taskQueue: env.taskQueue,
      workflowId: uid('suggest-size'),
      args: [6_000],
    });
    const sized = await bySize.result();
    expect(sized.historySize).toBeGreaterThanOrEqual(20_000);
    expect(sized.historyLength).toBeLessThan(30);
    const sizeStarts = (await startedEvents(bySize.workflowId)).map((e) => e.workflowTaskStartedEventAttributes!);
    expect(sizeStarts.at(-1)).toMatchObject({
      suggestContinueAsNew: true,
      suggestContinueAsNewReasons: [Reason.SUGGEST_CONTINUE_AS_NEW_REASON_HISTORY_SIZE_TOO_LARGE],
    });
    expect(Number(sizeStarts.at(-1)!.historySizeBytes)).toBe(sized.historySize);
    expect(Number(sizeStarts.at(-2)!.historySizeBytes)).toBeLessThan(20_000);
    await env.replay(bySize);
  });
});
