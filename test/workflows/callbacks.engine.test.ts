// A task's callback in the workflows, on the engine (fake model, fake
// delivery activity): the run starts the task's delivery workflow with its
// first events and feeds it after each turn and at its end; the delivery
// workflow delivers them one at a time, in order, outlives the task, retries
// a failed attempt, and after a 410 skips the rest. A cancelled task delivers
// its end, and so does one terminated from outside (its delivery workflow,
// started with the run, finds it closed). Histories are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, saveHistories as save, worker } from './env';
import { fakeActivities, recorder, taskInput } from './fake-activities';
import type { CallbackConfig, DeliveryRecord, TaskInput } from '../../workflows/types';
import type { DeliverCallbackInput } from '../../activities/callbacks';
import { waitUntil } from '../support/wait-until';
import { callbackWorkflowId, deliveriesQuery } from '../../workflows/definitions';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-callbacks-${randomUUID()}`;
const rec = recorder();
/** Every attempt, in the order the fake receiver saw them: webhook id, type, attempt, answer. */
const seen: { url: string; id: string; type: string; attempt: number; answer: number; body: string }[] = [];
/** What the fake receiver at each URL answers on an attempt. */
const answers: Record<string, (attempt: number) => number> = {};

async function deliverCallback(input: DeliverCallbackInput) {
  const { attempt } = Context.current().info;
  const answer = (answers[input.url] ?? (() => 200))(attempt);
  seen.push({
    url: input.url,
    id: input.webhookId,
    type: String(JSON.parse(input.body).type),
    attempt,
    answer,
    body: input.body,
  });
  if (answer === 410)
    throw ApplicationFailure.create({
      message: 'gone',
      type: 'callback_gone',
      nonRetryable: true,
      details: [{ status: 410, attempt }],
    });
  if (answer >= 300)
    throw ApplicationFailure.create({
      message: `HTTP ${answer}`,
      type: 'callback_failed',
      nextRetryDelay: 10,
      details: [{ status: answer, attempt }],
    });
  return { status: answer, attempt, at: new Date().toISOString() };
}

const activities = () => ({ ...fakeActivities(() => env, taskQueue, rec), deliverCallback });

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

function input(message: string, url: string, over: Partial<CallbackConfig> = {}): TaskInput {
  const callback: CallbackConfig = {
    url,
    headers: { authorization: 'Bearer x' },
    retryDelaysMs: [10, 10, 10],
    timeoutMs: 1000,
    ...over,
  };
  return taskInput(message, { joinGraceMs: 300, ownsTurn: true, background: true, callback });
}

/** Waits until the run is in its `wait` tool: the tool's timer (of `seconds`) is started. */
function midWait(h: WorkflowHandle, seconds: number): Promise<boolean> {
  return waitUntil(`the run in its ${seconds} s wait`, async () =>
    ((await h.fetchHistory()).events ?? []).some(
      (e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds) === seconds,
    ),
  );
}

async function deliveries(taskId: string): Promise<DeliveryRecord[]> {
  const h = env.client.workflow.getHandle(callbackWorkflowId(taskId));
  await h.result();
  return h.query(deliveriesQuery);
}

test('every event and the end are delivered in order by a workflow that outlives the task; a failed attempt is retried', async () => {
  answers['http://hooks/a'] = (attempt) =>
    attempt === 1 && seen.filter((s) => s.url === 'http://hooks/a').length === 2 ? 500 : 200;
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('tools:2', 'http://hooks/a');
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await h.result();
    const records = await deliveries(i.taskId);
    const mine = seen.filter((s) => s.url === 'http://hooks/a');
    // The third delivery failed once and went again (same id) before the fourth was tried.
    expect(mine[2].id).toBe(mine[3].id);
    expect(mine[2].answer).toBe(500);
    const ids = records.map((r) => r.webhook_id);
    expect(ids[ids.length - 1]).toBe(`msg_${i.taskId}_end`);
    const positions = ids.slice(0, -1).map((x) => Number(x.split('_').pop()));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(records.map((r) => r.type)).toEqual(
      expect.arrayContaining([
        'agent_started',
        'agent_tool_use',
        'agent_response',
        'agent_completed',
        'task.completed',
      ]),
    );
    expect(records.every((r) => r.status === 'delivered')).toBe(true);
    expect(records.find((r) => r.webhook_id === mine[2].id)).toMatchObject({ attempts: 2, last_status: 200 });
    await save('callbacks', h, env.client.workflow.getHandle(callbackWorkflowId(i.taskId)));
  });
});

test('events picks what is delivered; a 410 skips the rest', async () => {
  answers['http://hooks/gone'] = () => 410;
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('tools:1', 'http://hooks/gone', { events: ['agent_tool_use', 'agent_response', 'completed'] });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await h.result();
    const records = await deliveries(i.taskId);
    expect(records.map((r) => [r.type, r.status])).toEqual([
      ['agent_tool_use', 'gone'],
      ['agent_response', 'skipped'],
      ['task.completed', 'skipped'],
    ]);
    expect(seen.filter((s) => s.url === 'http://hooks/gone')).toHaveLength(1);
  });
});

test('a cancelled task delivers its end', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('wait:30:1', 'http://hooks/cancel', { events: ['cancelled', 'failed'] });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await midWait(h, 30);
    await h.cancel();
    await h.result().catch(() => undefined);
    const records = await deliveries(i.taskId);
    expect(records.map((r) => [r.type, r.status])).toEqual([['task.cancelled', 'delivered']]);
    await save('callbacks-cancelled', h, env.client.workflow.getHandle(callbackWorkflowId(i.taskId)));
  });
});

test('a task terminated from outside delivers its end: its delivery workflow finds the run closed', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('wait:30:1', 'http://hooks/terminated', {
      events: ['completed', 'failed', 'cancelled'],
      watchMs: 200,
    });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await midWait(h, 30);
    await h.terminate('operator stop');
    const records = await deliveries(i.taskId);
    expect(records.map((r) => [r.webhook_id, r.type, r.status])).toEqual([
      [`msg_${i.taskId}_end`, 'task.failed', 'delivered'],
    ]);
    const body = JSON.parse(seen.find((s) => s.url === 'http://hooks/terminated')!.body);
    expect(body).toMatchObject({
      type: 'task.failed',
      taskId: i.taskId,
      status: 'failed',
      error: { type: 'terminated', message: 'the task was terminated' },
    });
    expect(Date.parse(body.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    await save('callbacks-terminated', h, env.client.workflow.getHandle(callbackWorkflowId(i.taskId)));
  });
});

test('a callback that asks only for a cancelled end: nothing is delivered, and the delivery workflow (started with the run) ends with its task', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('tools:1', 'http://hooks/quiet', { events: ['cancelled'], watchMs: 200 });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await h.result();
    expect(await deliveries(i.taskId)).toEqual([]);
    expect(seen.filter((s) => s.url === 'http://hooks/quiet')).toEqual([]);
  });
});

test('a task cancelled after its first turns delivers its end too: its delivery workflow is not cancelled with it', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('wait:1:5', 'http://hooks/cancel-later', { events: ['agent_tool_use', 'cancelled'] });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    await waitUntil('the first delivery to the receiver', () =>
      seen.some((s) => s.url === 'http://hooks/cancel-later'),
    );
    await h.cancel();
    await h.result().catch(() => undefined);
    const records = await deliveries(i.taskId);
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(records.at(-1)).toMatchObject({ type: 'task.cancelled', status: 'delivered' });
    expect(records.every((r) => r.status === 'delivered')).toBe(true);
  });
});

test('a task whose delivery workflow already runs (a reset run of it) feeds that one and completes', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('tools:1', 'http://hooks/reset', { events: ['agent_tool_use', 'completed'] });
    // What a reset leaves: the delivery workflow of the task's earlier run, still waiting for its end.
    const earlier = await env.client.workflow.start('callbackDelivery', {
      taskQueue,
      workflowId: callbackWorkflowId(i.taskId),
      args: [{ taskId: i.taskId, account: i.account, callback: i.request.callback! }],
    });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    expect((await h.result()).status).toBe('completed');
    await earlier.result();
    expect((await earlier.query(deliveriesQuery)).map((r) => [r.type, r.status])).toEqual([
      ['agent_tool_use', 'delivered'],
      ['task.completed', 'delivered'],
    ]);
  });
});
