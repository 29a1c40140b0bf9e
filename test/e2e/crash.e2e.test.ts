// Failures of the parts: a frozen (SIGSTOP) Redis or engine (answers within
// 1 s: from Temporal, or 503), Redis down (tasks and results survive; streams
// answer 503), Temporal down (503). A run submitted while the worker is dead
// is never handed to the dead worker's polls. kill -9 of the worker
// mid-answer is in mid-answer.e2e.test.ts.
import { temporal } from '@temporalio/proto';
import { Api, sleep, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(180_000);
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
const call: Api = (...args) => ctx.call(...args);

test("a run submitted after the worker died is not handed to the dead worker's polls: its first workflow task goes to the next worker", async () => {
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  const pending = call('POST', '/', { body: { message: 'while no worker runs' } });
  await ctx.stack().startWorker();
  const r = await pending;
  expect(r.json.status).toBe('completed');
  // A task handed to a poll whose connection was gone would have waited out its 10 s timeout.
  await withTemporal(ctx.stack(), async (client) => {
    const events = (await client.workflow.getHandle(r.json.task_id).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)).toEqual([]);
  });
});

/** Milliseconds `fn` took, and what it gave. */
async function timedCall<T>(fn: () => Promise<T>): Promise<{ ms: number; r: T }> {
  const t0 = Date.now();
  const r = await fn();
  return { ms: Date.now() - t0, r };
}

test('a frozen Redis: background runs, status reads and readiness answer within 1 s; streams get 503; the task completes once it is back', async () => {
  const redis = ctx.stack().children.redis.proc;
  redis.kill('SIGSTOP');
  try {
    // Within a few seconds the gateway's probe notices; from then on nothing waits on Redis.
    await waitUntil(async () => (await call('POST', '/', { body: { message: 'stream?' }, headers: { accept: 'text/event-stream' } })).status === 503, 10_000, 200);
    const submit = await timedCall(() => call('POST', '/', { body: { message: 'while redis sleeps', background: true } }));
    expect(submit.r.status).toBe(202);
    expect(submit.ms).toBeLessThan(1000);
    const status = await timedCall(() => call('GET', `/tasks/${submit.r.json.task_id}`));
    expect(status.r.status).toBe(200);
    expect(status.ms).toBeLessThan(1000);
    const stream = await timedCall(() => call('GET', `/tasks/${submit.r.json.task_id}/events`));
    expect(stream.r.status).toBe(503);
    expect(stream.r.headers.get('retry-after')).toBe('1');
    expect(stream.ms).toBeLessThan(1000);
    const ready = await timedCall(() => call('GET', '/readyz', { key: null }));
    expect(ready.r.status).toBe(503);
    expect(ready.ms).toBeLessThan(1500);
    redis.kill('SIGCONT');
    const done = await call('GET', `/tasks/${submit.r.json.task_id}/result?wait=60`);
    expect(done.json).toMatchObject({ status: 'completed', output: 'You said: while redis sleeps' });
  } finally {
    redis.kill('SIGCONT');
  }
});

test('a frozen engine: requests get 503 with Retry-After within 1 s, and answers resume when it is back', async () => {
  const engine = ctx.stack().children.engine.proc;
  const before = await call('POST', '/', { body: { message: 'before the freeze', background: true } });
  await call('GET', `/tasks/${before.json.task_id}/result?wait=30`);
  engine.kill('SIGSTOP');
  try {
    await waitUntil(async () => (await call('GET', `/tasks/${before.json.task_id}`)).status === 503, 15_000, 200);
    const submit = await timedCall(() => call('POST', '/', { body: { message: 'anyone there?', background: true } }));
    expect(submit.r.status).toBe(503);
    expect(submit.r.json.error).toMatchObject({ type: 'unavailable' });
    expect(submit.r.headers.get('retry-after')).toBe('1');
    expect(submit.ms).toBeLessThan(1000);
    const status = await timedCall(() => call('GET', `/tasks/${before.json.task_id}`));
    expect(status.r.status).toBe(503);
    expect(status.ms).toBeLessThan(1000);
    engine.kill('SIGCONT');
    await waitUntil(async () => (await call('GET', `/tasks/${before.json.task_id}`)).status === 200, 15_000, 200);
    expect((await call('GET', `/tasks/${before.json.task_id}`)).json.status).toBe('completed');
  } finally {
    engine.kill('SIGCONT');
  }
});

test('Redis down: tasks run and their status and results still come from Temporal; streams answer 503', async () => {
  await ctx.stack().children.redis.stop('SIGKILL');
  const bg = await call('POST', '/', { body: { message: 'no relay today', background: true } });
  expect(bg.status).toBe(202);
  const done = await call('GET', `/tasks/${bg.json.task_id}/result?wait=30`);
  expect(done.status).toBe(200);
  expect(done.json).toMatchObject({ status: 'completed', output: 'You said: no relay today' });
  const status = await call('GET', `/tasks/${bg.json.task_id}`);
  expect(status.json.status).toBe('completed');
  const stream = await call('POST', '/', { body: { message: 'stream?' }, headers: { accept: 'text/event-stream' } });
  expect(stream.status).toBe(503);
  expect(stream.headers.get('retry-after')).toBeTruthy();
  expect(stream.json.error.type).toBe('unavailable');
  const ready = await call('GET', '/readyz', { key: null });
  expect(ready.status).toBe(503);
});

test('Temporal down: 503 with Retry-After, not a hang', async () => {
  await ctx.stack().children.engine.stop('SIGKILL');
  const first = await timedCall(() => call('POST', '/', { body: { message: 'anyone there?', background: true } }));
  expect(first.r.status).toBe(503);
  expect(first.ms).toBeLessThan(10_000);
  // Once the gateway's probe has noticed (a second or two), it answers at once.
  await sleep(3000);
  const r = await timedCall(() => call('POST', '/', { body: { message: 'anyone there?', background: true } }));
  expect(r.r.status).toBe(503);
  expect(r.r.headers.get('retry-after')).toBeTruthy();
  expect(r.ms).toBeLessThan(1000);
  const s = await call('GET', '/tasks/task_0123456789abcdef');
  expect(s.status).toBe(503);
});
