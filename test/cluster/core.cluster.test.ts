// The service's core classes on the production topology (the official Temporal server on
// PostgreSQL, two workers, two gateways behind HAProxy): JSON, SSE and background runs through the
// load balancer, each read back through either gateway; a session's turns on different gateways;
// an idempotency key sent to both; a tool call; a signed callback delivered once per event; a
// schedule firing once.
import { KEY_A, KEY_B, postStream, readSse, waitUntil } from '../e2e/helpers';
import { startReceiver, verifiedBy } from '../e2e/callback-receiver';
import { clusterApi, clusterStack } from './cluster';

jest.setTimeout(120_000);
const lb = clusterApi();
const g1 = clusterApi('gateway-1');
const g2 = clusterApi('gateway-2');

test('JSON, SSE and background runs through the load balancer; either gateway reads any task', async () => {
  const json = await lb('POST', '/', { body: { message: 'hello cluster' } });
  expect(json.status).toBe(200);
  expect(json.json).toMatchObject({ status: 'completed', output: 'You said: hello cluster' });

  const res = await postStream(clusterStack(), { message: 'one two three', streaming_tokens: true });
  const events = await readSse(res);
  expect(events.map((e) => e.data.type).slice(-1)).toEqual(['agent_completed']);
  expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));

  const bg = await lb('POST', '/', { body: { message: 'in the background', background: true } });
  expect(bg.status).toBe(202);
  for (const gateway of [g1, g2]) {
    const done = await gateway('GET', `/tasks/${bg.json.task_id}/result?wait=30`);
    expect(done.json).toMatchObject({ status: 'completed', output: 'You said: in the background' });
  }
});

test("a session's turns on two gateways are one conversation, in order", async () => {
  const first = await g1('POST', '/', { body: { message: 'my name is Ada' } });
  expect(first.status).toBe(200);
  const session = first.json.session as string;
  const second = await g2('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
  expect(second.status).toBe(200);
  expect(second.json.session).toBe(session);
  const msgs = await lb('GET', `/sessions/${session}/messages`);
  expect(msgs.json.messages).toEqual([
    { role: 'user', content: 'my name is Ada' },
    { role: 'assistant', content: 'You said: my name is Ada' },
    { role: 'user', content: 'what is my name?' },
    { role: 'assistant', content: 'You said: what is my name?' },
  ]);
});

test('one Idempotency-Key sent to both gateways starts one task', async () => {
  const headers = { 'idempotency-key': `cluster-${Date.now()}` };
  const body = { message: 'exactly once', background: true };
  const [a, b] = await Promise.all([g1('POST', '/', { body, headers }), g2('POST', '/', { body, headers })]);
  expect([a.status, b.status]).toEqual([202, 202]);
  expect(a.json.task_id).toBe(b.json.task_id);
  // The one that came second says so.
  const replayed = [a, b].map((x) => x.headers.get('idempotent-replayed'));
  expect(replayed.filter((h) => h === 'true')).toHaveLength(1);
});

test('a tool call runs on a worker and its result reaches the answer', async () => {
  const r = await lb('POST', '/', {
    body: { message: '[[tool name=calculate args={"expression":"6*7"}]] compute' },
  });
  expect(r.status).toBe(200);
  expect(r.json.output).toContain('42');
});

test('a callback is delivered once per event, signed, whichever gateway took the task', async () => {
  const receiver = await startReceiver();
  try {
    const secrets = (await lb('GET', '/account/webhook-secret')).json.secrets.map((s: { secret: string }) => s.secret);
    const r = await g2('POST', '/', {
      body: { message: 'call me back', background: true, callback: { url: receiver.url('/cb') } },
    });
    expect(r.status).toBe(202);
    const final = await waitUntil('the final notification', () =>
      receiver.accepted('/cb').find((d) => (d.json as { type?: string }).type === 'agent_completed'),
    );
    const ids = receiver.accepted('/cb').map((d) => String(d.headers['webhook-id']));
    expect(new Set(ids).size).toBe(ids.length);
    expect(verifiedBy(final, secrets)).not.toHaveLength(0);
  } finally {
    await receiver.close();
  }
});

test('a date schedule fires once, with two gateways up', async () => {
  const at = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
  const r = await lb('POST', '/', {
    body: {
      message: 'plan it',
      background: true,
      schedules: [{ schedule: at.toISOString(), message: 'at the instant' }],
    },
  });
  expect(r.status).toBe(202);
  const id = r.json.schedules[0].schedule_id as string;
  const tasks = await waitUntil(
    `the run of schedule ${id}`,
    async () => (await lb('GET', `/tasks?schedule=${id}`, { key: KEY_A })).json.tasks as { status: string }[],
    (t) => t.length >= 1 && t.every((x) => x.status === 'completed'),
    { stepMs: 250 },
  );
  expect(tasks).toHaveLength(1);
  const detail = await g1('GET', `/schedules/${id}`);
  expect(detail.json.recent_tasks).toHaveLength(1);
});

test("an account's concurrency holds across gateways: four of bob's tasks run, the fifth waits for a slot", async () => {
  // MAX_RUNNING_TASKS_PER_ACCOUNT is 4 in the cluster pass (cluster-env.ts); bob runs nothing else.
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const gateway = i % 2 ? g2 : g1;
    const r = await gateway('POST', '/', {
      key: KEY_B,
      body: { message: `[[slow first=600000 delay=0]] hold ${i}`, background: true },
    });
    expect(r.status).toBe(202);
    ids.push(r.json.task_id);
  }
  const statuses = () =>
    Promise.all(ids.map(async (id) => (await lb('GET', `/tasks/${id}`, { key: KEY_B })).json.status as string));
  const first = await waitUntil('four of them running', statuses, (s) => s.filter((x) => x === 'running').length === 4);
  expect(first.filter((x) => x === 'queued')).toHaveLength(1);
  const waiting = ids[first.indexOf('queued')];
  // A slot freed through one gateway goes to the task that waited, whichever gateway took it.
  expect((await g2('POST', `/tasks/${ids[first.indexOf('running')]}/cancel`, { key: KEY_B })).status).toBe(202);
  const then = await waitUntil('the fifth running', statuses, (s) => s[ids.indexOf(waiting)] === 'running');
  expect(then.filter((x) => x === 'running')).toHaveLength(4);
  for (const id of ids) await g1('POST', `/tasks/${id}/cancel`, { key: KEY_B });
});
