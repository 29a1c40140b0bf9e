// Failures of the parts: a frozen (SIGSTOP) Redis or engine (nothing waits on
// it once the gateway's probe has noticed: answers from Temporal, or a 503 from
// the gateway's health gate), Redis down (tasks and results survive; streams
// answer 503), Temporal down (503). A run submitted while the worker is dead
// is never handed to the dead worker's polls. kill -9 of the worker
// mid-answer is in mid-answer.e2e.test.ts. How fast these answers come is the
// bench's to measure, not this file's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { ChildLogs } from '../../src/dev/launcher/child-logs';
import { Api, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(180_000);
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-logs-'));
const childLogs = new ChildLogs({ dir: logDir });
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' }, { childLogs });
const call: Api = (...args) => ctx.call(...args);

afterAll(async () => {
  await childLogs.close();
  fs.rmSync(logDir, { recursive: true, force: true });
});

const gatewayLog = (): Record<string, unknown>[] =>
  fs
    .readFileSync(path.join(logDir, 'gateway.log'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

// The 503 of the gateway's health gate (a dependency its probe found away) says Retry-After: 1;
// one that came from a call's own deadline or error says 5 (src/common/errors.ts).
const GATE_RETRY_AFTER = '1';

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
    expect(
      events.filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT),
    ).toEqual([]);
  });
});

test('a frozen Redis: background runs, status reads and readiness answer without it; streams get 503; the task completes once it is back', async () => {
  const redis = ctx.stack().children.redis.proc;
  redis.kill('SIGSTOP');
  try {
    // Within a few seconds the gateway's probe notices; from then on nothing waits on Redis.
    await waitUntil(
      "the gateway's probe to find Redis away (a stream's 503)",
      () => call('POST', '/', { body: { message: 'stream?' }, headers: { accept: 'text/event-stream' } }),
      (r) => r.status === 503,
      { stepMs: 200 },
    );
    const submit = await call('POST', '/', { body: { message: 'while redis sleeps', background: true } });
    expect(submit.status).toBe(202);
    const taskId = submit.json.task_id;
    // Its status cache write was refused at once ('redis is away'), not given up after its own
    // timeout ('redis gave no answer'): the gateway logs which.
    const cacheLines = await waitUntil(
      "the gateway's log line of the submit's refused cache write",
      () => gatewayLog().filter((l) => l.msg === 'status cache unavailable' && l.taskId === taskId),
      (lines) => lines.length > 0,
    );
    expect(cacheLines.map((l) => l.err)).toEqual(cacheLines.map(() => 'redis is away'));
    const status = await call('GET', `/tasks/${taskId}`);
    expect(status.status).toBe(200);
    expect(status.json.task_id).toBe(taskId);
    const stream = await call('GET', `/tasks/${taskId}/events`);
    expect(stream.status).toBe(503);
    expect(stream.headers.get('retry-after')).toBe(GATE_RETRY_AFTER);
    const ready = await call('GET', '/readyz', { key: null });
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({
      status: 'unavailable',
      redis: expect.stringMatching(/^down: /),
      temporal: 'ok',
    });
    // Nor did the status read wait on Redis: every cache refusal logged for the task is 'redis is away'.
    const refusals = gatewayLog().filter((l) => l.msg === 'status cache unavailable' && l.taskId === taskId);
    expect(refusals.map((l) => l.err)).toEqual(refusals.map(() => 'redis is away'));
    redis.kill('SIGCONT');
    const done = await call('GET', `/tasks/${taskId}/result?wait=60`);
    expect(done.json).toMatchObject({ status: 'completed', output: 'You said: while redis sleeps' });
  } finally {
    redis.kill('SIGCONT');
  }
});

test("a frozen engine: requests get the health gate's 503 with Retry-After, and answers resume when it is back", async () => {
  const engine = ctx.stack().children.engine.proc;
  const before = await call('POST', '/', { body: { message: 'before the freeze', background: true } });
  await call('GET', `/tasks/${before.json.task_id}/result?wait=30`);
  engine.kill('SIGSTOP');
  try {
    // The gate's Retry-After says the probe has found the engine away: from then on no request waits on it.
    await waitUntil(
      "the gateway's probe to find the engine away (the health gate's 503)",
      () => call('GET', `/tasks/${before.json.task_id}`),
      (r) => r.status === 503 && r.headers.get('retry-after') === GATE_RETRY_AFTER,
      { stepMs: 200 },
    );
    const submit = await call('POST', '/', { body: { message: 'anyone there?', background: true } });
    expect(submit.status).toBe(503);
    expect(submit.json.error).toMatchObject({ type: 'unavailable' });
    expect(submit.headers.get('retry-after')).toBe(GATE_RETRY_AFTER);
    const status = await call('GET', `/tasks/${before.json.task_id}`);
    expect(status.status).toBe(503);
    expect(status.headers.get('retry-after')).toBe(GATE_RETRY_AFTER);
    engine.kill('SIGCONT');
    await waitUntil(
      'the gateway to answer from the engine again',
      () => call('GET', `/tasks/${before.json.task_id}`),
      (r) => r.status === 200,
      { stepMs: 200 },
    );
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
  // Before the probe notices, the call itself fails (its own 503); a call that hung would hold the test to its timeout.
  const first = await call('POST', '/', { body: { message: 'anyone there?', background: true } });
  expect(first.status).toBe(503);
  expect(first.headers.get('retry-after')).toBeTruthy();
  // Once the gateway's probe has noticed (a second or two), the health gate answers, without calling Temporal.
  const r = await waitUntil(
    "the gateway's probe to find Temporal down (the health gate's 503)",
    () => call('POST', '/', { body: { message: 'anyone there?', background: true } }),
    (res) => res.status === 503 && res.headers.get('retry-after') === GATE_RETRY_AFTER,
    { stepMs: 200 },
  );
  expect(r.json.error).toMatchObject({ type: 'unavailable' });
  const s = await call('GET', '/tasks/task_0123456789abcdef');
  expect(s.status).toBe(503);
});
