// Memo and search attributes (at start, upserted, carried across runs) and what
// DescribeWorkflowExecution reports about a run.
import { TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid, eventTypes } from './harness';
import * as activities from './activities/search-attributes-memo';
import {
  upserter,
  carrier,
  retriedUpserter,
  badUpsert,
  withPendingActivity,
  keywordKey,
  intKey,
  finishSignal,
} from './workflows/search-attributes-memo';

const ET = temporal.api.enums.v1.EventType;
const IVT = temporal.api.enums.v1.IndexedValueType;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/search-attributes-memo'), activities });
  // The embedded server registers these at start; a real server may need them added.
  const svc = env.connection.operatorService;
  const { customAttributes } = await svc.listSearchAttributes({ namespace: env.namespace });
  const wanted: Record<string, temporal.api.enums.v1.IndexedValueType> = {
    CustomKeyword: IVT.INDEXED_VALUE_TYPE_KEYWORD,
    CustomInt: IVT.INDEXED_VALUE_TYPE_INT,
  };
  const missing = Object.fromEntries(Object.entries(wanted).filter(([name]) => customAttributes?.[name] === undefined));
  if (Object.keys(missing).length)
    await svc.addSearchAttributes({ namespace: env.namespace, searchAttributes: missing });
});
afterAll(async () => {
  await env?.teardown();
});

test('memo and search attributes given at start are seen by the workflow and describe; upserts merge into them', async () => {
  // Started and described before a worker polls: once its first workflow task has run, describe
  // shows the upserts instead (a worker that was quicker than the describe failed this once).
  const h = await env.client.workflow.start(upserter, {
    taskQueue: env.taskQueue,
    workflowId: uid('upsert'),
    memo: { kept: { nested: true }, removed: 'soon' },
    typedSearchAttributes: new TypedSearchAttributes([{ key: keywordKey, value: 'at-start' }]),
  });
  const before = await h.describe();
  expect(before.memo).toEqual({ kept: { nested: true }, removed: 'soon' });
  expect(before.typedSearchAttributes.get(keywordKey)).toBe('at-start');
  await env.withWorker(async () => {
    // Upserts are visible once the workflow task that made them completed.
    await waitUntil(
      'the upserted CustomInt in describe',
      async () => (await h.describe()).typedSearchAttributes.get(intKey),
      (v) => v === 42,
    );
    const after = await h.describe();
    expect(after.memo).toEqual({ kept: { nested: true }, added: 'new' });
    expect(after.typedSearchAttributes.get(intKey)).toBe(42);
    expect(after.typedSearchAttributes.get(keywordKey)).toBeUndefined();

    await h.signal(finishSignal);
    const r = await h.result();
    expect(r.atStart).toEqual({ memo: { kept: { nested: true }, removed: 'soon' }, keyword: 'at-start' });
    expect(r.afterUpsert).toEqual({ memo: { kept: { nested: true }, added: 'new' }, int: 42 });
    const types = await eventTypes(h);
    expect(types).toContain(ET.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
    expect(types).toContain(ET.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED);
    // Closed runs keep what they had.
    expect((await h.describe()).typedSearchAttributes.get(intKey)).toBe(42);
    await env.replay(h);
  });
});

test('continue-as-new carries memo and the current search attributes to the next run', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(carrier, {
      args: [false],
      taskQueue: env.taskQueue,
      workflowId: uid('carrier'),
      memo: { owner: 'test' },
      typedSearchAttributes: [{ key: keywordKey, value: 'chain' }],
    });
    expect(await h.result()).toEqual({ memo: { owner: 'test' }, keyword: 'chain', int: 7 });
    const desc = await h.describe();
    expect(desc.runId).not.toBe(h.firstExecutionRunId);
    expect(desc.memo).toEqual({ owner: 'test' });
    expect(desc.typedSearchAttributes.get(intKey)).toBe(7);
    await env.replay(env.client.workflow.getHandle(h.workflowId, h.firstExecutionRunId));
    await env.replay(h);
  });
});

test('a retried run starts with the memo and search attributes the chain started with', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(retriedUpserter, {
      taskQueue: env.taskQueue,
      workflowId: uid('retried'),
      memo: { note: 'original' },
      typedSearchAttributes: [{ key: keywordKey, value: 'original' }],
      retry: { initialInterval: '100ms', maximumAttempts: 2 },
    });
    expect(await h.result()).toEqual({ memo: { note: 'original' }, keyword: 'original' });
    const first = env.client.workflow.getHandle(h.workflowId, h.firstExecutionRunId);
    expect((await first.describe()).typedSearchAttributes.get(keywordKey)).toBe('upserted');
    await env.replay(first);
    await env.replay(h);
  });
});

test('an unknown search attribute is refused at start and fails the workflow task when upserted', async () => {
  const refused = await env.client.workflow
    .start(upserter, {
      taskQueue: env.taskQueue,
      workflowId: uid('bad-start'),
      searchAttributes: { NoSuchAttribute: ['x'] },
    })
    .catch((e) => e);
  expect(refused).toBeInstanceOf(Error);
  expect(String(refused.cause?.details ?? refused.message)).toMatch(/NoSuchAttribute/);
  // So are values of the wrong type and system attributes.
  const wrongType = await env.client.workflow
    .start(upserter, {
      taskQueue: env.taskQueue,
      workflowId: uid('bad-type'),
      searchAttributes: { CustomInt: ['forty-two'] },
    })
    .catch((e) => e);
  expect(String(wrongType.cause?.details ?? wrongType.message)).toMatch(/invalid value for search attribute CustomInt/);
  const system = await env.client.workflow
    .start(upserter, {
      taskQueue: env.taskQueue,
      workflowId: uid('bad-system'),
      searchAttributes: { WorkflowId: ['mine'] },
    })
    .catch((e) => e);
  expect(String(system.cause?.details ?? system.message)).toMatch(/WorkflowId attribute can't be set/);

  await env.withWorker(async () => {
    const h = await env.client.workflow.start(badUpsert, { taskQueue: env.taskQueue, workflowId: uid('bad-upsert') });
    const failed = await waitUntil('the workflow task to fail', async () =>
      (await h.fetchHistory()).events!.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_FAILED),
    );
    expect(failed?.workflowTaskFailedEventAttributes?.cause).toBe(
      temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES,
    );
    expect(await eventTypes(h)).not.toContain(ET.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
    await h.terminate('cannot make progress');
    await env.replay(h);
  });
});

test('describe reports status, configuration and pending activities', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(withPendingActivity, {
      taskQueue: env.taskQueue,
      workflowId: uid('describe'),
      workflowRunTimeout: '1m',
    });
    const desc = await waitUntil(
      'the pending activity to heartbeat',
      () => h.describe(),
      (d) => !!d.raw.pendingActivities?.[0]?.lastHeartbeatTime,
    );
    expect(desc).toBeDefined();
    expect(desc!.status.name).toBe('RUNNING');
    expect(desc!.type).toBe('withPendingActivity');
    expect(desc!.taskQueue).toBe(env.taskQueue);
    expect(desc!.closeTime).toBeUndefined();
    expect(Number(desc!.raw.executionConfig?.workflowRunTimeout?.seconds)).toBe(60);
    const pending = desc!.raw.pendingActivities!;
    expect(pending).toHaveLength(1);
    expect(pending[0].activityType?.name).toBe('blockUntilCancelled');
    expect(pending[0].state).toBe(temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED);
    expect(pending[0].attempt).toBe(1);

    await h.cancel();
    expect(await h.result()).toBe('cancelled');
    const closed = await h.describe();
    expect(closed.status.name).toBe('COMPLETED');
    expect(closed.closeTime).toBeInstanceOf(Date);
    expect(closed.raw.pendingActivities ?? []).toHaveLength(0);
    expect(closed.historyLength).toBe((await h.fetchHistory()).events!.length);
    await env.replay(h);
  });
});
