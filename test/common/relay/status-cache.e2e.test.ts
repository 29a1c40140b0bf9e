// The status cache against a real redis-server: racing writers never move a
// task backwards, and metadata patches merge into whatever is cached.
import pino from 'pino';
import { StatusCache } from '../../../src/common/relay/status-cache';
import { keys } from '../../../src/common/relay/keys';
import type { TaskStatus, TaskView } from '../../../workflows/types';
import { PrivateRedis, startPrivateRedis } from './private-redis';

let server: PrivateRedis;
let cache: StatusCache;

beforeAll(async () => {
  server = await startPrivateRedis();
  cache = new StatusCache(server.redis, pino({ level: 'silent' }), 60_000);
});
afterAll(async () => {
  await server?.stop();
});

let n = 0;
const view = (status: TaskStatus, over: Partial<TaskView> = {}): TaskView => ({
  task_id: `task_${++n}`,
  session: 'sess_1',
  account: 'acct',
  status,
  progress: 0,
  current_step: null,
  error: null,
  metadata: {},
  created_at: '2026-01-01T00:00:00.000Z',
  started_at: null,
  completed_at: null,
  ...over,
});

test('a late queued write does not hide that the task runs', async () => {
  const running = view('running', { progress: 0.5 });
  expect(await cache.put(running)).toBe(true);
  expect(await cache.put({ ...running, status: 'queued', progress: 0 })).toBe(false);
  expect(await cache.get(running.task_id)).toEqual(running);
});

test('a finished task stays finished; running updates of the same status overwrite', async () => {
  const v = view('running');
  await cache.put(v);
  expect(await cache.put({ ...v, progress: 0.5, current_step: '2' })).toBe(true);
  expect((await cache.get(v.task_id))?.current_step).toBe('2');
  await cache.put({ ...v, status: 'cancelled' });
  expect(await cache.put({ ...v, status: 'running', progress: 0.9 })).toBe(false);
  expect((await cache.get(v.task_id))?.status).toBe('cancelled');
  expect(await server.redis.pttl(keys.status(v.task_id))).toBeGreaterThan(50_000);
});

test('a metadata merge applies to the newer document another writer cached meanwhile', async () => {
  const queued = view('queued', { metadata: { a: 1 } });
  await cache.put(queued);
  const merged = await cache.update(queued, (v) => {
    // Another writer (the worker) lands between the read and the write.
    if (v.status === 'queued')
      void server.redis.set(keys.status(v.task_id), JSON.stringify({ ...v, status: 'running', metadata: { a: 1 } }));
    return { ...v, metadata: { ...v.metadata, b: 2 } };
  });
  expect(merged).toMatchObject({ status: 'running', metadata: { a: 1, b: 2 } });
  expect(await cache.get(queued.task_id)).toEqual(merged);
});

test('a merge with nothing cached caches the fallback, changed', async () => {
  const v = view('running');
  expect(await cache.update(v, (x) => ({ ...x, metadata: { k: 'v' } }))).toMatchObject({ metadata: { k: 'v' } });
  expect((await cache.get(v.task_id))?.metadata).toEqual({ k: 'v' });
});

test("the worker's write keeps metadata patched into the cached document, and never moves a task backwards", async () => {
  const running = view('running', { metadata: { a: 1, b: 'old' } });
  await cache.put({ ...running, status: 'queued', metadata: { a: 1, b: 'new', c: true } });
  await cache.putKeepingMetadata(running);
  expect(await cache.get(running.task_id)).toEqual({ ...running, metadata: { a: 1, b: 'new', c: true } });
  const done = { ...running, status: 'completed' as const, progress: 1 };
  await cache.putKeepingMetadata(done);
  await cache.putKeepingMetadata(running);
  expect(await cache.get(running.task_id)).toEqual({ ...done, metadata: { a: 1, b: 'new', c: true } });
  // Nothing cached: the document as given.
  const fresh = view('running', { metadata: { z: 0 } });
  await cache.putKeepingMetadata(fresh);
  expect(await cache.get(fresh.task_id)).toEqual(fresh);
});

test("the worker's write takes one script call when the cached metadata holds nothing new", async () => {
  const queued = view('queued', { metadata: { a: 1, nested: { x: [1, 2] }, s: 'é' } });
  await cache.put(queued);
  const cas = jest.spyOn(server.redis as unknown as { aesStatusPut: () => Promise<number> }, 'aesStatusPut');
  try {
    const running = { ...queued, status: 'running' as const, metadata: { ...queued.metadata, b: 2 } };
    await cache.putKeepingMetadata(running);
    expect(await cache.get(queued.task_id)).toEqual(running);
    expect(cas).not.toHaveBeenCalled();
    // A value that differs is a patch the workflow had not heard of: merged, through the compare-and-set.
    await server.redis.set(
      keys.status(queued.task_id),
      JSON.stringify({ ...running, metadata: { ...running.metadata, a: 9 } }),
    );
    await cache.putKeepingMetadata({ ...running, progress: 0.5 });
    expect(await cache.get(queued.task_id)).toEqual({
      ...running,
      progress: 0.5,
      metadata: { ...running.metadata, a: 9 },
    });
    expect(cas).toHaveBeenCalledTimes(1);
  } finally {
    cas.mockRestore();
  }
});

test('a finished status says whether it was read from the closed run in Temporal; the mark never shows in the view', async () => {
  const done = view('completed', { progress: 1 });
  await cache.put(done);
  expect(await cache.getRecorded(done.task_id)).toEqual({ view: done, recorded: false });
  expect(await cache.put(done, { recorded: true })).toBe(true);
  expect(await cache.getRecorded(done.task_id)).toEqual({ view: done, recorded: true });
  expect(await cache.get(done.task_id)).toEqual(done);
  // Only a finished view is marked: an open run has nothing recorded to agree with.
  const running = view('running');
  await cache.put(running, { recorded: true });
  expect((await cache.getRecorded(running.task_id))?.recorded).toBe(false);
});

describe('a Redis that does not answer', () => {
  const silent = {
    defineCommand: () => undefined,
    get: () => new Promise(() => undefined),
    aesStatusPut: () => new Promise(() => undefined),
  };

  test('is passed over after opTimeoutMs: reads fail and writes give up', async () => {
    // This Redis never answers: a call that waited for it would hang to the test's timeout, and the read's error names the limit.
    const frozen = new StatusCache(silent as never, pino({ level: 'silent' }), 60_000, { opTimeoutMs: 150 });
    await expect(frozen.get('task_x')).rejects.toThrow(/within 150 ms/);
    expect(await frozen.put(view('running'))).toBe(false);
  });

  test('is not called at all while it is known to be away', async () => {
    let calls = 0;
    const counting = {
      defineCommand: () => undefined,
      get: () => (calls++, Promise.resolve(null)),
      aesStatusPut: () => (calls++, Promise.resolve(1)),
    };
    const away = new StatusCache(counting as never, pino({ level: 'silent' }), 60_000, { available: () => false });
    await expect(away.get('task_x')).rejects.toThrow(/away/);
    expect(await away.put(view('running'))).toBe(false);
    expect(calls).toBe(0);
  });
});
