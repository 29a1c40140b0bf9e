// POST / in its three answers (JSON, SSE, background), the event stream's
// shape and order, thinking in flash mode, model failures and retries.
import fs from 'node:fs';
import { Api, postStream, readSse, useStack, waitUntil } from './helpers';
import { GATEWAY_NODE_FLAGS } from '../../src/dev/launcher/node-flags';
import { threadNice } from '../worker/thread-nice';
import { parseServerTiming } from '../../src/gateway/middleware/server-timing';

jest.setTimeout(120_000);
const ctx = useStack();
const call: Api = (...args) => ctx.call(...args);

test('JSON answer: session, task, output, complete-block events and cost', async () => {
  const r = await call('POST', '/', { body: { message: 'hello service' } });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ status: 'completed', output: 'You said: hello service' });
  expect(r.json.session).toMatch(/^sess_/);
  expect(r.json.task_id).toMatch(/^task_/);
  expect(r.json.events.map((e: { type: string }) => e.type)).toEqual([
    'agent_started',
    'agent_response_start',
    'agent_response',
    'agent_step',
    'agent_cost',
    'agent_completed',
  ]);
  expect(Number(r.json.cost)).toBeGreaterThan(0);
});

test("the worker runs at WORKER_NICE (10) but for its token thread, which keeps the API processes' priority", async () => {
  const ours = threadNice(process.pid).get(process.pid)!;
  const worker = threadNice(ctx.stack().children.worker.proc.pid!);
  expect(worker.get(ctx.stack().children.worker.proc.pid!)).toBe(Math.max(ours, 10));
  const kept = [...worker.values()].filter((n) => n === ours).length;
  const lowered = [...worker.values()].filter((n) => n === Math.max(ours, 10)).length;
  expect(kept).toBeGreaterThanOrEqual(1);
  expect(lowered).toBeGreaterThan(kept);
  expect(threadNice(ctx.stack().children.gateway.proc.pid!).get(ctx.stack().children.gateway.proc.pid!)).toBe(ours);
});

test('the stack starts the gateway with its Node flags (src/dev/launcher/node-flags.ts)', () => {
  const cmdline = fs.readFileSync(`/proc/${ctx.stack().children.gateway.proc.pid}/cmdline`, 'utf8').split('\0');
  expect(cmdline.slice(1, 1 + GATEWAY_NODE_FLAGS.length)).toEqual([...GATEWAY_NODE_FLAGS]);
});

test('SSE token by token: ids are seqs, every event names type/session/task/seq, stream ends after completion', async () => {
  const res = await postStream(ctx.stack(), { message: 'one two three four', streaming_tokens: true });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const events = await readSse(res);
  const types = events.map((e) => e.data.type);
  expect(types[0]).toBe('agent_started');
  expect(types.slice(-3)).toEqual(['agent_step', 'agent_cost', 'agent_completed']);
  const tokens = events.filter((e) => e.data.type === 'agent_response').map((e) => e.data.content);
  expect(tokens.length).toBeGreaterThan(3);
  expect(tokens.join('')).toBe('You said: one two three four');
  events.forEach((e, i) => {
    expect(e.data.seq).toBe(i + 1);
    expect(e.id).toBe(String(i + 1));
    expect(e.data.session).toBe(events[0].data.session);
    expect(e.data.task_id).toBe(events[0].data.task_id);
  });
});

test('SSE with complete blocks: one agent_response for the whole answer (streaming: false)', async () => {
  const events = await readSse(await postStream(ctx.stack(), { message: 'blocks please', streaming: false }));
  const responses = events.filter((e) => e.data.type === 'agent_response');
  expect(responses).toHaveLength(1);
  expect(responses[0].data.content).toBe('You said: blocks please');
});

test('flash mode sends the model reasoning as agent_thinking, before the response', async () => {
  const events = await readSse(
    await postStream(ctx.stack(), { message: '[[think]] why is the sky blue', mode: 'flash', streaming: true }),
  );
  const types = events.map((e) => e.data.type);
  expect(types).toContain('agent_thinking_start');
  expect(types.indexOf('agent_thinking')).toBeLessThan(types.indexOf('agent_response_start'));
  // base mode hides it
  const base = await readSse(await postStream(ctx.stack(), { message: '[[think]] and again', streaming: true }));
  expect(base.map((e) => e.data.type)).not.toContain('agent_thinking');
});

test('background: 202 with Location while the model is still working', async () => {
  // The model's first token would come in 10 minutes: a POST that waited for the run would hold
  // the test to its timeout. (How fast the 202 comes is the bench's to measure: `npm run bench`.)
  const t0 = Date.now();
  const r = await call('POST', '/', {
    body: { message: '[[slow first=600000 delay=0]] take your time', background: true },
  });
  const elapsed = Date.now() - t0;
  expect(r.status).toBe(202);
  expect(r.json).toMatchObject({ status: 'queued' });
  expect(r.headers.get('location')).toBe(`/tasks/${r.json.task_id}`);
  // Where the gateway's time went: the run's start and the status cache (the two run in parallel;
  // the new session is not opened: lazy-sessions.ts), and the whole.
  const timing = parseServerTiming(r.headers.get('server-timing'));
  expect(Object.keys(timing).sort()).toEqual(['redis', 'temporal-start', 'total']);
  expect(timing.total).toBeGreaterThanOrEqual(Math.max(timing['temporal-start'], timing.redis));
  // Consistency, not speed: the gateway's own total is within the time the client saw.
  expect(timing.total).toBeLessThan(elapsed + 1);
  expect((await call('GET', `/tasks/${r.json.task_id}`)).json.status).not.toBe('completed');
  // The run is not left holding the account's slot for ten minutes.
  expect((await call('POST', `/tasks/${r.json.task_id}/cancel`)).status).toBe(202);
  const done = await call('GET', `/tasks/${r.json.task_id}/result?wait=30`);
  expect(done.json.status).toBe('cancelled');
});

test('a 400 from the model fails the task with a clear error; agent_error ends the stream', async () => {
  const events = await readSse(await postStream(ctx.stack(), { message: '[[fail status=400 times=1 key=bad1]] go' }));
  const last = events[events.length - 1].data;
  expect(last.type).toBe('agent_error');
  expect(last.error.type).toBe('ModelBadRequest');
  expect(last.error.message).toMatch(/HTTP 400/);
  const status = await call('GET', `/tasks/${last.task_id}`);
  expect(status.json.status).toBe('failed');
  expect(status.json.error.type).toBe('ModelBadRequest');
});

test('429 and 500 from the model are retried by Temporal and the task completes', async () => {
  const r = await call('POST', '/', { body: { message: '[[fail status=429 times=2 key=rl1]] retry me' } });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  expect(r.json.output).toContain('retry me');
  const r2 = await call('POST', '/', { body: { message: '[[fail status=500 times=1 key=se1]] and me' } });
  expect(r2.json.status).toBe('completed');
});

test('idle streams get keep-alive comments; a client that disconnects does not stop the task', async () => {
  const res = await postStream(ctx.stack(), { message: '[[slow first=2500 delay=10]] wait for it', streaming: true });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  let taskId = '';
  // SSE_HEARTBEAT_MS is 1 s in these tests; the model's first token comes after 2.5 s.
  await waitUntil(
    'a keep-alive comment and the task id on the idle stream',
    async () => {
      const { value } = await reader.read();
      text += dec.decode(value, { stream: true });
      taskId = /"task_id":"(task_[a-z0-9]+)"/.exec(text)?.[1] ?? '';
      return text.includes(': keep-alive') && taskId !== '';
    },
    { stepMs: 0 },
  );
  expect(text).toContain(': keep-alive');
  await reader.cancel(); // the client goes away mid-run
  const r = await call('GET', `/tasks/${taskId}/result?wait=30`);
  expect(r.json).toMatchObject({ status: 'completed', output: 'You said: wait for it' });
});

test('the namespace keeps finished runs for RETENTION_DAYS', async () => {
  const { Connection } = await import('@temporalio/client');
  const c = await Connection.connect({ address: ctx.stack().temporalAddress });
  const ns = await c.workflowService.describeNamespace({ namespace: 'default' });
  expect(Number(ns.config!.workflowExecutionRetentionTtl!.seconds)).toBe(7 * 86400);
  await c.close();
});
