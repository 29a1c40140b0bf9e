// TaskService against the embedded engine and a private Redis. A `?wait=`
// long-poll is bounded: it returns at the end of its wait with no poll left
// running (a poll loop per request used to live on until the task ended), and
// at once when the run closes. A new-session submit caches the queued status
// alongside the start, and leaves nothing cached when the start fails. A cached
// status never runs ahead of Temporal's record of the run.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TaskService } from '../../src/gateway/services/task-service';
import { ServerTiming } from '../../src/gateway/middleware/server-timing';
import { loadConfig } from '../../src/common/config';
import { keys } from '../../src/common/relay/keys';
import { StatusCache } from '../../src/common/relay/status-cache';
import { createEnv } from '../workflows/env';
import { PrivateRedis, startPrivateRedis } from '../common/relay/private-redis';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(60_000);
let env: TestWorkflowEnvironment;
let service: TaskService;
let inFlight = 0;
/** How each history long-poll ended: 'answered', or the gRPC code it failed with. */
const polls: Promise<string>[] = [];
let redis: PrivateRedis;
let submitting: TaskService;
const account = { account: 'acct-ts' } as never;
const config = loadConfig({ TEMPORAL_TASK_QUEUE: `nobody-${randomUUID()}` });

beforeAll(async () => {
  env = await createEnv();
  const svc = env.connection.workflowService;
  const original = svc.getWorkflowExecutionHistory.bind(svc);
  // Counts history long-polls still open: what a lingering wait would leave behind.
  svc.getWorkflowExecutionHistory = ((req: never) => {
    inFlight++;
    const poll = original(req).finally(() => inFlight--);
    polls.push(
      poll.then(
        () => 'answered',
        (err: { code?: number }) => `code ${err?.code}`,
      ),
    );
    return poll;
  }) as typeof svc.getWorkflowExecutionHistory;
  service = new TaskService(env.client, env.connection, {} as never, {} as never, pino({ level: 'silent' }));
  redis = await startPrivateRedis();
  submitting = new TaskService(
    env.client,
    env.connection,
    new StatusCache(redis.redis, pino({ level: 'silent' }), 60_000),
    config,
    pino({ level: 'silent' }),
  );
});
afterAll(async () => {
  await redis?.stop();
  await env?.teardown();
});

/** A run nobody works on (no worker polls its queue): open until terminated. */
async function openRun(): Promise<string> {
  const workflowId = `task_${randomUUID().replace(/-/g, '')}`;
  await env.client.workflow.start('neverWorked', { taskQueue: `nobody-${randomUUID()}`, workflowId });
  return workflowId;
}

test('a wait on a running task ends after its time, leaving no long-poll behind', async () => {
  // The run stays open until terminated below: a wait that did not end at its time would hold the test to its timeout.
  const id = await openRun();
  const first = polls.length;
  const t0 = Date.now();
  await service.waitForClose(id, 800);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
  const mine = polls.length - first;
  expect(mine).toBeGreaterThan(0);
  // Its last long-poll was cut by the wait's deadline (DEADLINE_EXCEEDED, gRPC code 4), not left to run on, and none came after.
  expect(await polls[polls.length - 1]).toBe('code 4');
  await waitUntil(
    'the long-polls to end',
    () => inFlight,
    (n) => n === 0,
  );
  expect(polls.length - first).toBe(mine);
  await env.client.workflow.getHandle(id).terminate();
});

test('a wait returns as soon as the run closes, however it closes', async () => {
  const id = await openRun();
  // A ten-minute wait: one that ran its time out rather than return at the close would hold the test to its timeout.
  const waiting = service.waitForClose(id, 600_000);
  await waitUntil(
    "the wait's long-poll",
    () => inFlight,
    (n) => n > 0,
  );
  await env.client.workflow.getHandle(id).terminate('done here');
  await waiting;
  expect(inFlight).toBe(0);
});

test('a new-session submit starts the run (its session is not opened) and caches the queued status, each timed', async () => {
  const timing = new ServerTiming();
  const sub = await submitting.submit(
    account,
    { message: 'hi', background: true } as never,
    undefined,
    undefined,
    timing,
  );
  const cached = JSON.parse((await redis.redis.get(keys.status(sub.taskId)))!);
  expect(cached).toMatchObject({ task_id: sub.taskId, session: sub.session, status: 'queued' });
  expect((await env.client.workflow.getHandle(sub.taskId).describe()).status.name).toBe('RUNNING');
  expect(timing.header()).toMatch(/temporal-start;dur=/);
  expect(timing.header()).toMatch(/redis;dur=/);
  // A run that names no session opens none (lazy-sessions.ts): its id is the task's.
  expect(timing.header()).not.toMatch(/temporal-session/);
  expect(sub.session).toBe(sub.taskId.replace(/^task_/, 'sess_'));
  await expect(env.client.workflow.getHandle(`session:acct-ts:${sub.session}`).describe()).rejects.toThrow(
    /not found/i,
  );
  await env.client.workflow.getHandle(sub.taskId).terminate();
});

test('a submit whose start fails answers with that failure and leaves no queued status cached', async () => {
  const workflow = env.client.workflow;
  const start = workflow.start.bind(workflow);
  let failedId: string | undefined;
  workflow.start = (async (type: string, opts: { workflowId: string }) => {
    if (type !== 'agentTask') return start(type as never, opts as never);
    failedId = opts.workflowId;
    // Slower than the cache write, so the document is there when the start fails.
    await new Promise((r) => setTimeout(r, 200));
    throw Object.assign(new Error('the start was refused'), { name: 'ServiceError' });
  }) as typeof workflow.start;
  try {
    await expect(submitting.submit(account, { message: 'hi', background: true } as never, undefined)).rejects.toThrow();
  } finally {
    workflow.start = start;
  }
  expect(failedId).toBeDefined();
  expect(await redis.redis.get(keys.status(failedId!))).toBeNull();
});

test("a start whose first answer was lost and that was tried again is the submit's own: it succeeds", async () => {
  const workflow = env.client.workflow;
  const start = workflow.start.bind(workflow);
  const retried: string[] = [];
  // As when the engine restarts mid-call: the first attempt starts the workflow, its answer is
  // lost, and the call tried again meets the workflow it started (already started).
  workflow.start = (async (type: string, opts: { workflowId: string }) => {
    await start(type as never, opts as never);
    retried.push(type);
    return start(type as never, opts as never);
  }) as typeof workflow.start;
  let sub;
  try {
    sub = await submitting.submit(account, { message: 'hi', background: true } as never, undefined);
  } finally {
    workflow.start = start;
  }
  expect(retried).toEqual(['agentTask']);
  expect((await env.client.workflow.getHandle(sub.taskId).describe()).status.name).toBe('RUNNING');
  await env.client.workflow.getHandle(sub.taskId).terminate();
});

describe('a cached status never runs ahead of Temporal', () => {
  const finished = (id: string, status: 'completed' | 'failed') => ({
    task_id: id,
    session: 'sess_x',
    account: 'acct-ts',
    status,
    progress: 1,
    current_step: null,
    error: null,
    metadata: {},
    created_at: new Date().toISOString(),
    started_at: new Date().toISOString(),
    completed_at: new Date().toISOString(),
  });

  test('a run that cached its end but is still open in Temporal reads as running', async () => {
    const id = await openRun();
    const cache = new StatusCache(redis.redis, pino({ level: 'silent' }), 60_000);
    await cache.put(finished(id, 'completed'));
    const view = await submitting.view(account, id);
    expect(view).toMatchObject({ status: 'running', completed_at: null, error: null });
    await env.client.workflow.getHandle(id).terminate('stopped by an operator');
    // Temporal recorded a termination: that is the status, whatever the run had cached.
    const after = await submitting.view(account, id);
    expect(after).toMatchObject({ status: 'failed', error: { type: 'terminated' } });
    expect(await cache.getRecorded(id)).toMatchObject({ recorded: true, view: { status: 'failed' } });
  });

  test('once Temporal has recorded the close, the finished status is read from the cache alone', async () => {
    const id = await openRun();
    await env.client.workflow.getHandle(id).terminate();
    const cache = new StatusCache(redis.redis, pino({ level: 'silent' }), 60_000);
    await cache.put(
      { ...finished(id, 'failed'), error: { type: 'terminated', message: 'cached' } },
      { recorded: true },
    );
    const blind = new TaskService(
      { workflow: { getHandle: () => ({ describe: () => Promise.reject(new Error('not asked')) }) } } as never,
      env.connection,
      cache,
      config,
      pino({ level: 'silent' }),
    );
    expect(await blind.view(account, id)).toMatchObject({ status: 'failed', error: { message: 'cached' } });
  });
});
