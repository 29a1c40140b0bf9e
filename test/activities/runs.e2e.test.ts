// The session's wait for its run's close (awaitRunClose) against a real engine and Redis: a run
// Temporal does not know yet is waited for (a new session is opened while the gateway starts its
// first run, and under load the wait asked first: the run was recorded `vanished`, then
// completed); one that never comes is gone once RUN_WATCH_MS has passed.
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { TaskView } from '../../workflows/types';
import { createRunActivities, type RunState } from '../../activities/runs';
import { StatusCache } from '../../src/common/relay/status-cache';
import { sleep, useStack, withTemporal } from '../e2e/helpers';

jest.setTimeout(60_000);
const ctx = useStack();
let redis: Redis;
let cache: StatusCache;
beforeAll(() => {
  redis = new Redis(ctx.stack().redisUrl);
  cache = new StatusCache(redis, pino({ level: 'silent' }), 60_000);
});
afterAll(() => redis?.quit());

const queued = (taskId: string): TaskView => ({
  task_id: taskId,
  session: 's',
  account: 'alice',
  status: 'queued',
  progress: 0,
  current_step: null,
  error: null,
  metadata: {},
  created_at: new Date().toISOString(),
  started_at: null,
  completed_at: null,
});

/** awaitRunClose of `taskId` with the stack's engine, in a mock activity context; RUN_WATCH_MS as given. */
const awaitClose = (taskId: string, runWatchMs: number) =>
  withTemporal(ctx.stack(), (temporal) => {
    const runs = createRunActivities({ temporal, statusCache: cache, config: { RUN_WATCH_MS: runWatchMs } } as never);
    return new MockActivityEnvironment().run(runs.awaitRunClose, { workflowId: taskId }) as Promise<RunState>;
  });

test('a run that starts after the wait began is waited for, and its close recorded as it happened', async () => {
  const taskId = `task_late_${randomUUID().slice(0, 8)}`;
  await cache.put(queued(taskId));
  const waiting = awaitClose(taskId, 30_000);
  await sleep(1000);
  // Started late on a queue no worker polls, then terminated: a close from outside.
  await withTemporal(ctx.stack(), async (client) => {
    const handle = await client.workflow.start('noSuchWorkflow', { taskQueue: `nobody-${taskId}`, workflowId: taskId });
    await sleep(500);
    await handle.terminate('the test');
  });
  expect((await waiting).status).toBe('TERMINATED');
  expect((await cache.get(taskId))?.error).toEqual({ type: 'terminated', message: 'the task was terminated' });
});

test('a run that never starts is gone once RUN_WATCH_MS has passed since the wait began', async () => {
  const taskId = `task_never_${randomUUID().slice(0, 8)}`;
  await cache.put(queued(taskId));
  const began = Date.now();
  expect((await awaitClose(taskId, 1500)).status).toBe('NOT_FOUND');
  expect(Date.now() - began).toBeGreaterThanOrEqual(1500);
  expect((await cache.get(taskId))?.error?.type).toBe('vanished');
});
