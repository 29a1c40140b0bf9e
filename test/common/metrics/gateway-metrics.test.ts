// The gateway's /metrics over its Express app (loopback HTTP, stand-in
// dependencies): the token, the included endpoints (one up, one down), tasks
// by status, SSE clients, restarts told over IPC, and HTTP requests by route
// template (never a task id).
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../../src/common/config';
import { createApp, type GatewayDeps } from '../../../src/gateway/app';
import { createExpressServer } from '../../../src/common/http/express-server';
import type { AccountDirectory } from '../../../src/common/accounts/registry';
import { AesGcmPayloadCodec } from '../../../src/common/codec/aes-gcm-codec';
import { GatewayMetrics } from '../../../src/common/metrics/gateway-metrics';
import { TaskCounts } from '../../../src/common/metrics/task-counts';

const TOKEN = 'metrics-token-0123456789';
const KEY = 'key-alice-0123456789';
const WORKER_URL = 'http://worker.invalid:9464/metrics';
const DOWN_URL = 'http://down.invalid:9464/metrics';
const WORKER_TEXT =
  '# HELP aes_tool_calls_total Tool calls.\n# TYPE aes_tool_calls_total counter\naes_tool_calls_total{server="builtin",outcome="ok",process="worker"} 4\n';

/** Includes answered in memory: the worker's text, or a connection refused. */
const fakeFetch = (async (url: string, init?: RequestInit) => {
  if (url !== WORKER_URL)
    throw Object.assign(new TypeError('fetch failed'), { cause: new Error('connect ECONNREFUSED') });
  const auth = new Headers(init?.headers).get('authorization');
  return new Response(auth === `Bearer ${TOKEN}` ? WORKER_TEXT : 'no', {
    status: auth === `Bearer ${TOKEN}` ? 200 : 401,
  });
}) as typeof fetch;

let server: Server;
let url: string;
let metrics: GatewayMetrics;

beforeAll(async () => {
  const registry = new Registry();
  registry.setDefaultLabels({ process: 'gateway' });
  const counts = new TaskCounts(async (q) => ({ count: q.includes("'completed'") ? 3 : 0, groups: [] }));
  metrics = new GatewayMetrics(registry, {
    taskCounts: counts,
    sseClients: () => 2,
    includeUrls: [WORKER_URL, DOWN_URL],
    token: TOKEN,
    fetch: fakeFetch,
    logger: pino({ level: 'silent' }),
  });
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  const accounts = {
    lookup: async (key: string) => (key === KEY ? { account: 'alice' } : undefined),
  } as unknown as AccountDirectory;
  const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }]);
  const app = createApp({
    config,
    logger: pino({ level: 'silent' }),
    accounts,
    payloadCodec: codec,
    metrics,
  } as unknown as GatewayDeps);
  server = createExpressServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

/** The value of the sample `name` with (at least) these labels, in any order; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([^{\s]+)\{(.*)\} (\S+)$/.exec(line);
    if (m && m[1] === name && want.every((w) => m[2].split(',').includes(w))) return Number(m[3]);
  }
  return undefined;
}

const scrape = (token: string | null = TOKEN) =>
  fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

test('with METRICS_TOKEN, /metrics asks for it: 401 as a JSON error without, or with another', async () => {
  for (const token of [null, 'wrong-token-0123456789']) {
    const r = await scrape(token);
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { type: string } }).error.type).toBe('unauthorized');
  }
  expect((await scrape()).status).toBe(200);
});

test("the scrape has the gateway's metrics and the included worker's; an endpoint that is down is marked, never failing it", async () => {
  const r = await scrape();
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await r.text();
  expect(text).toContain('aes_tool_calls_total{server="builtin",outcome="ok",process="worker"} 4');
  expect(text).toContain(`aes_metrics_include_up{url="${WORKER_URL}",process="gateway"} 1`);
  expect(text).toContain(`aes_metrics_include_up{url="${DOWN_URL}",process="gateway"} 0`);
  expect(text).toContain('aes_tasks{status="completed",process="gateway"} 3');
  expect(text).toContain('aes_tasks{status="queued",process="gateway"} 0');
  expect(text).toContain('aes_sse_clients{process="gateway"} 2');
  expect(text.match(/^# TYPE aes_tool_calls_total /gm)).toHaveLength(1);
});

test('HTTP requests count by route template and status class, never by task id', async () => {
  await fetch(`${url}/tasks/task_abc123`, { headers: { authorization: 'Bearer nope' } }); // refused before a route: `none`
  await fetch(`${url}/healthz`);
  const text = await (await scrape()).text();
  expect(
    sample(text, 'aes_http_requests_total', {
      method: 'GET',
      route: '/healthz',
      status_class: '2xx',
      process: 'gateway',
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    sample(text, 'aes_http_requests_total', { method: 'GET', route: 'none', status_class: '4xx' }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    sample(text, 'aes_http_request_duration_seconds_count', { method: 'GET', route: '/metrics' }),
  ).toBeGreaterThanOrEqual(1);
  expect(text).not.toContain('task_abc123');
});

test('restart totals come over IPC from npm start, as counters by component', async () => {
  const ipc = Object.assign(new EventEmitter(), { send: () => true, channel: { unref: jest.fn() } });
  const proc = ipc as unknown as NodeJS.Process;
  metrics.listenForRestarts(proc);
  ipc.emit('message', { type: 'restarts', counts: { worker: 2, gateway: 0 } });
  ipc.emit('message', { type: 'ping', id: 1 }); // not for metrics
  const text = await (await scrape()).text();
  expect(text).toContain('# TYPE aes_component_restarts_total counter');
  expect(text).toContain('aes_component_restarts_total{component="worker",process="gateway"} 2');
  expect(text).toContain('aes_component_restarts_total{component="gateway",process="gateway"} 0');
  expect(ipc.channel.unref).toHaveBeenCalled();
});
