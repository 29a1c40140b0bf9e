// Callbacks of background tasks against a real receiver: every delivery
// signed (checked by an independent Standard Webhooks verifier), the
// request's headers sent, a task's deliveries in order, a failed delivery
// retried with the same webhook-id, 410 stopping a task's deliveries, a kill
// -9 of the worker and of the gateway losing none, a rotated secret signing
// alongside the old one, each refused URL a 400, the headers absent from
// history and logs, and a task terminated from outside still sending its end
// (its delivery workflow checks the task every RUN_WATCH_MS, 1 s here).
import { api, KEY_A, KEY_B, useStack, waitUntil, withTemporal } from './helpers';
import { Delivery, startReceiver, verifiedBy, Receiver } from './callback-receiver';
import { rawHistory } from './raw-history';
import { AgentClient } from '../../client';

jest.setTimeout(180_000);
// Retries every half second, thirty times: long enough to outlast a restart, short for a test.
const ctx = useStack({
  OUTBOUND_ALLOWLIST: '127.0.0.1',
  CALLBACK_RETRY_DELAYS: Array(30).fill('500ms').join(','),
  CALLBACK_TIMEOUT_MS: '2000',
  MODEL_HEARTBEAT_TIMEOUT_MS: '2000',
  RUN_WATCH_MS: '1000',
});
const call: typeof ctx.call = (...args) => ctx.call(...args);
let receiver: Receiver;
const HEADER_SECRET = 'Bearer cb-SECRET-7f3a9c1e5b';

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

async function secrets(key = KEY_A): Promise<string[]> {
  const r = await call('GET', '/account/webhook-secret', { key });
  expect(r.status).toBe(200);
  return r.json.secrets.map((s: { secret: string }) => s.secret);
}

async function submit(
  path: string,
  callback: Record<string, unknown> = {},
  message = 'hello callbacks',
): Promise<string> {
  const r = await call('POST', '/', {
    body: { message, background: true, callback: { url: receiver.url(path), ...callback } },
  });
  expect(r.status).toBe(202);
  return r.json.task_id;
}

// A receiver has the request before our delivery activity has its answer and records it: read the
// task's deliveries once none is pending (any longer).
async function settled(id: string, count = 1) {
  const list = await waitUntil(
    `the deliveries of ${id} to settle`,
    async () => (await call('GET', `/tasks/${id}/deliveries`)).json.deliveries as { status: string }[],
    (l) => l.length >= count && l.every((r) => r.status !== 'pending'),
  );
  return list as unknown as Record<string, unknown>[];
}

const finalOf = (path: string) => receiver.accepted(path).find((d) => String(d.json.type).startsWith('task.'));
const idOrder = (ds: Delivery[]) => ds.map((d) => String(d.headers['webhook-id']));

test('every event and the final notification arrive signed, in order, with the request headers', async () => {
  const id = await submit(
    '/all',
    { headers: { authorization: HEADER_SECRET, 'x-team': 'ops' } },
    '[[tool name=calculate args={"expression":"6*7"}]] compute',
  );
  await waitUntil('the final notification at /all', async () => finalOf('/all') !== undefined);
  const got = receiver.accepted('/all');
  const valid = await secrets();
  for (const d of got) {
    expect(verifiedBy(d, valid)).toEqual(valid);
    expect(d.headers.authorization).toBe(HEADER_SECRET);
    expect(d.headers['x-team']).toBe('ops');
    expect(d.headers['content-type']).toBe('application/json');
  }
  const types = got.map((d) => d.json.type);
  expect(types).toEqual(
    expect.arrayContaining([
      'agent_started',
      'agent_tool_use',
      'agent_tool_response',
      'agent_response',
      'agent_cost',
      'agent_completed',
      'task.completed',
    ]),
  );
  expect(types[types.length - 1]).toBe('task.completed');
  // In order: the events' positions in the task, then the end.
  const ids = idOrder(got);
  expect(ids).toEqual([
    ...ids.slice(0, -1).sort((a, b) => Number(a.split('_').pop()) - Number(b.split('_').pop())),
    `msg_${id}_end`,
  ]);
  expect(new Set(ids).size).toBe(ids.length);
  for (const d of got.slice(0, -1)) expect(d.json).toMatchObject({ task_id: id, session: expect.any(String) });
  const end = finalOf('/all')!.json;
  expect(end).toMatchObject({
    type: 'task.completed',
    taskId: id,
    status: 'completed',
    result: { output: expect.any(String) },
  });
  expect(new Date(String(end.timestamp)).toISOString()).toBe(end.timestamp);
  const deliveries = await settled(id, got.length);
  expect(deliveries).toHaveLength(got.length);
  for (const r of deliveries) expect(r).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
  // The typed client reads the same.
  const client = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
  expect((await client.tasks.deliveries(id)).deliveries).toEqual(deliveries);
  expect((await client.account.webhookSecret()).secret).toBe(valid[0]);
});

test('a delivery that fails is retried with the same webhook-id; events picks what is sent', async () => {
  receiver.answer('/flaky', (_d, seen) => (seen === 1 ? 500 : 200));
  const id = await submit('/flaky', { events: ['agent_response', 'completed'] });
  await waitUntil('the final notification at /flaky', async () => finalOf('/flaky') !== undefined);
  const all = receiver.deliveries.filter((d) => d.path === '/flaky');
  expect(all.map((d) => [d.json.type, d.answered])).toEqual([
    ['agent_response', 500],
    ['agent_response', 200],
    ['task.completed', 500],
    ['task.completed', 200],
  ]);
  expect(all[0].headers['webhook-id']).toBe(all[1].headers['webhook-id']);
  expect(all[2].headers['webhook-id']).toBe(`msg_${id}_end`);
  const list = await settled(id, 2);
  expect(list.map((r) => [r.type, r.attempts, r.status])).toEqual([
    ['agent_response', 2, 'delivered'],
    ['task.completed', 2, 'delivered'],
  ]);
});

test("a 410 stops the task's deliveries", async () => {
  receiver.answer('/gone', 410);
  const id = await submit('/gone');
  await waitUntil('every delivery of the task settled', async () => {
    const list = (await call('GET', `/tasks/${id}/deliveries`)).json.deliveries as { status: string }[];
    return list.length > 1 && list.every((r) => r.status !== 'pending');
  });
  expect(receiver.deliveries.filter((d) => d.path === '/gone')).toHaveLength(1);
  const list = (await call('GET', `/tasks/${id}/deliveries`)).json.deliveries as {
    status: string;
    last_status: number | null;
  }[];
  expect(list[0]).toMatchObject({ status: 'gone', last_status: 410 });
  expect(list.slice(1).every((r) => r.status === 'skipped')).toBe(true);
});

test('kill -9 of the worker and of the gateway between deliveries loses none and keeps the order', async () => {
  receiver.answer('/later', 503);
  const id = await submit('/later');
  await waitUntil('a first delivery attempt at /later', async () =>
    receiver.deliveries.some((d) => d.path === '/later'),
  );
  const stack = ctx.stack();
  stack.children.worker.proc.kill('SIGKILL');
  await stack.children.worker.exited;
  stack.children.gateway.proc.kill('SIGKILL');
  await stack.children.gateway.exited;
  await stack.restarters.worker();
  await stack.restarters.gateway();
  // Right after the kill, a query of the delivery workflow may wait for Temporal to give up on the
  // dead worker's sticky queue (a 503 meanwhile): ask until it answers.
  const pending = await waitUntil(
    'the deliveries to answer after the restarts',
    () => call('GET', `/tasks/${id}/deliveries`),
    (r) => r.status === 200,
    { stepMs: 500 },
  );
  // Under way: the last failure is the receiver's 503, or the attempt the kill cut short (its timeout).
  expect(pending.json.deliveries[0]).toMatchObject({
    status: 'pending',
    last_error: expect.stringMatching(/503|timeout/),
  });
  expect(pending.json.deliveries[0].attempts).toBeGreaterThanOrEqual(1);
  receiver.answer('/later', 200);
  await waitUntil('the final notification at /later', async () => finalOf('/later') !== undefined, {
    timeoutMs: 60_000,
  });
  // At least once: an attempt the kill (or a slow completion) cut may be delivered again, with the
  // same webhook-id, which a receiver deduplicates on. Deduplicated, every event is there, in order.
  const ids = [...new Set(idOrder(receiver.accepted('/later')))];
  expect(ids[ids.length - 1]).toBe(`msg_${id}_end`);
  const positions = ids.slice(0, -1).map((i) => Number(i.split('_').pop()));
  expect(positions).toEqual(positions.map((_, i) => i + 1)); // every event, in order
  expect(receiver.accepted('/later').map((d) => d.json.type)).toEqual(
    expect.arrayContaining(['agent_started', 'agent_completed', 'task.completed']),
  );
});

test('a task terminated from outside still delivers its end (task.failed, terminated), and its delivery workflow closes', async () => {
  const id = await submit(
    '/terminated',
    { events: ['completed', 'failed', 'cancelled'] },
    '[[slow delay=200 tokens=200]] cut short',
  );
  await waitUntil('the task running', async () => (await call('GET', `/tasks/${id}`)).json.status === 'running');
  await withTemporal(ctx.stack(), (client) => client.workflow.getHandle(id).terminate('operator stop'));
  await waitUntil('the final notification at /terminated', async () => finalOf('/terminated') !== undefined);
  const got = receiver.accepted('/terminated');
  expect(got).toHaveLength(1);
  expect(got[0].headers['webhook-id']).toBe(`msg_${id}_end`);
  expect(verifiedBy(got[0], await secrets())).not.toEqual([]);
  expect(got[0].json).toMatchObject({
    type: 'task.failed',
    taskId: id,
    status: 'failed',
    error: { type: 'terminated', message: 'the task was terminated' },
  });
  // The same end as the task's own status says.
  expect((await call('GET', `/tasks/${id}`)).json).toMatchObject({ status: 'failed', error: { type: 'terminated' } });
  expect(await settled(id)).toEqual([
    expect.objectContaining({ webhook_id: `msg_${id}_end`, type: 'task.failed', status: 'delivered' }),
  ]);
  await waitUntil(
    "the task's delivery workflow to complete",
    async () =>
      (await withTemporal(ctx.stack(), (client) => client.workflow.getHandle(`callbacks:${id}`).describe())).status
        .name === 'COMPLETED',
  );
});

test('a rotated secret: deliveries carry both signatures until the old one expires', async () => {
  const before = await secrets(KEY_B);
  const rotated = await call('POST', '/account/webhook-secret/rotate', { key: KEY_B });
  expect(rotated.status).toBe(200);
  expect(rotated.json.secret).not.toBe(before[0]);
  expect(rotated.json.secrets).toHaveLength(2);
  const expires = Date.parse(rotated.json.secrets[1].expires_at) - Date.now();
  expect(expires).toBeGreaterThan(23.9 * 3600_000);
  expect(expires).toBeLessThanOrEqual(24 * 3600_000);
  const r = await api(ctx.stack())('POST', '/', {
    key: KEY_B,
    body: { message: 'rotated', background: true, callback: { url: receiver.url('/rotated'), events: ['completed'] } },
  });
  await waitUntil('the final notification at /rotated', async () => finalOf('/rotated') !== undefined);
  expect(verifiedBy(finalOf('/rotated')!, [rotated.json.secret, before[0]])).toEqual([rotated.json.secret, before[0]]);
  // Accounts have their own secrets.
  expect(verifiedBy(finalOf('/rotated')!, await secrets(KEY_A))).toEqual([]);
  expect(r.status).toBe(202);
});

test("webhook (SPEC 6.4's example) is an alias of callback: {url, events: [completed, failed]} gets the final notification only", async () => {
  const r = await call('POST', '/', {
    body: {
      message: 'notify me',
      background: true,
      webhook: { url: receiver.url('/webhook'), events: ['completed', 'failed'] },
    },
  });
  expect(r.status).toBe(202);
  await waitUntil('the final notification at /webhook', async () => finalOf('/webhook') !== undefined);
  const got = receiver.accepted('/webhook');
  expect(got.map((d) => d.json.type)).toEqual(['task.completed']);
  expect(got[0].json).toMatchObject({
    taskId: r.json.task_id,
    status: 'completed',
    timestamp: expect.stringMatching(/Z$/),
    result: { output: expect.any(String) },
  });
  expect(verifiedBy(got[0], await secrets())).not.toEqual([]);
});

test('refused callbacks are refused naming the field: a URL the outbound policy refuses a 422, a shape the document states a 400', async () => {
  const refused = [
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest',
    'http://[::1]:8080/hook',
    'http://192.168.1.20/hook',
    'http://user:pw@127.0.0.1/hook',
    'ftp://127.0.0.1/hook',
  ];
  for (const url of refused) {
    const r = await call('POST', '/', { body: { message: 'x', background: true, callback: { url } } });
    expect({ url, status: r.status, path: r.json.error.details[0]?.path }).toEqual({
      url,
      status: 422,
      path: 'body.callback.url',
    });
    expect(r.json.error.message).toMatch(/^body\.callback\.url: /);
  }
  const cases: [Record<string, unknown>, string][] = [
    [{ message: 'x', callback: { url: receiver.url('/x') } }, 'background'],
    [
      {
        message: 'x',
        background: true,
        callback: { url: receiver.url('/x'), headers: { 'webhook-signature': 'v1,forged' } },
      },
      'webhook-signature',
    ],
    [{ message: 'x', background: true, callback: { url: receiver.url('/x'), events: ['agent_bogus'] } }, 'events'],
    [{ message: 'x', webhook: { url: receiver.url('/x') } }, 'body.webhook'],
    [
      { message: 'x', background: true, callback: { url: receiver.url('/x') }, webhook: { url: receiver.url('/y') } },
      'callback or webhook, not both',
    ],
  ];
  for (const [body, says] of cases) {
    const r = await call('POST', '/', { body });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain(says);
  }
});

test('callback headers are absent from the histories and the logs', async () => {
  const tasks = receiver.accepted('/all').map((d) => d.json.task_id ?? d.json.taskId);
  const id = String(tasks[0]);
  for (const wf of [id, `callbacks:${id}`]) {
    const raw = await rawHistory(ctx.stack().temporalAddress, wf);
    expect(raw).toContain('binary/encrypted');
    expect(raw).not.toContain('cb-SECRET');
  }
  for (const [name, child] of Object.entries(ctx.stack().children))
    expect({ name, found: child.output().includes('cb-SECRET') }).toEqual({ name, found: false });
});
