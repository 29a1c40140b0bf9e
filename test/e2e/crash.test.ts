// Failures of the parts: kill -9 of the worker mid-stream (the task completes;
// the stream a client keeps reading has no gap and no duplicate text), Redis
// down (tasks and results survive; streams answer 503), Temporal down (503).
import { Api, KEY_A, sleep, useStack, waitUntil } from './helpers';

jest.setTimeout(180_000);
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
const call: Api = (...args) => ctx.call(...args);

interface Ev {
  seq: number;
  type: string;
  content?: string;
}

/** Reads /tasks/{id}/events until a terminal event; reports progress through onEvent. */
async function readEvents(id: string, onEvent: (e: Ev) => void): Promise<Ev[]> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, { headers: { authorization: `Bearer ${KEY_A}` } });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const out: Ev[] = [];
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const data = buf
        .slice(0, i)
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      buf = buf.slice(i + 2);
      if (!data) continue;
      const ev = JSON.parse(data) as Ev;
      out.push(ev);
      onEvent(ev);
      if (ev.type === 'agent_completed' || ev.type === 'agent_error') {
        await reader.cancel();
        return out;
      }
    }
  }
}

test('kill -9 of the worker mid-stream: the task completes and the stream has no gap and no duplicate', async () => {
  const r = await call('POST', '/', { body: { message: '[[slow delay=60 tokens=80]] survive the crash', background: true, streaming: true } });
  const id = r.json.task_id;
  let tokens = 0;
  let killed = false;
  const reading = readEvents(id, (e) => {
    if (e.type === 'agent_response') tokens++;
    if (tokens === 20 && !killed) {
      killed = true;
      ctx.stack().children.worker.proc.kill('SIGKILL');
    }
  });
  await waitUntil(async () => killed, 30_000);
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const events = await reading;
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1)); // no gap, no duplicate
  expect(events[events.length - 1].type).toBe('agent_completed');
  const text = events.filter((e) => e.type === 'agent_response').map((e) => e.content).join('');
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json.status).toBe('completed');
  expect(text).toBe(result.json.output); // the client saw exactly the answer, once
  expect(events.filter((e) => e.type === 'agent_response_start')).toHaveLength(1);
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
  await sleep(200);
  const t0 = Date.now();
  const r = await call('POST', '/', { body: { message: 'anyone there?', background: true } });
  expect(r.status).toBe(503);
  expect(r.headers.get('retry-after')).toBeTruthy();
  expect(Date.now() - t0).toBeLessThan(10_000);
  const s = await call('GET', '/tasks/task_0123456789abcdef');
  expect(s.status).toBe(503);
});
