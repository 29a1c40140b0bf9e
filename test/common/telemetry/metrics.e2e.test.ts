// Prometheus metrics end to end (one stack, the real processes): a background
// task that calls a tool, watched over SSE, shows up in the gateway's
// /metrics with the worker's metrics included: tasks by status, tokens and
// cost, the tool call, queue wait and duration, step durations, relay lag,
// SSE clients and HTTP requests. Then the worker is killed under supervision
// and the gateway reports its restart.
import type { SupervisedStack } from '../../../src/dev/launcher/supervise-stack';
import { superviseStack } from '../../../src/dev/launcher/supervise-stack';
import { KEY_A, readSse, useStack, waitUntil } from '../../e2e/helpers';

jest.setTimeout(60_000);
const TOKEN = 'metrics-token-e2e-0123456789';
const ctx = useStack({ METRICS_TOKEN: TOKEN }, { workerMetricsPort: 0 });

async function scrape(token = TOKEN): Promise<{ status: number; text: string }> {
  const r = await fetch(`${ctx.stack().gatewayUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, text: await r.text() };
}

/** The value of sample `name` with (at least) these labels; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([^{\s]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name && want.every((w) => (m[2] ?? '').split(',').includes(w))) return Number(m[3]);
  }
  return undefined;
}

/**
 * Scrapes until `check` holds (values computed at scrape time may lag by their cache), and returns
 * that scrape; at the wait's deadline, the last one, for the caller's expect to show what is wrong.
 */
async function scrapeUntil(check: (text: string) => boolean): Promise<string> {
  let last = '';
  await waitUntil('a /metrics scrape that passes the check', async () => (last = (await scrape()).text), check, {
    stepMs: 250,
  }).catch(() => undefined);
  return last;
}

let taskId: string;

test('a tool-calling background task watched over SSE shows in /metrics, the worker’s metrics included', async () => {
  expect((await scrape('wrong-token-0123456789')).status).toBe(401);
  // The model waits before each answer, so the stream is open while a scrape looks.
  const submitted = await ctx.call('POST', '/', {
    body: {
      background: true,
      message: '[[tool name=calculate args={"expression":"6*7"}]] [[slow first=1000]] compute',
    },
  });
  expect(submitted.status).toBe(202);
  taskId = submitted.json.task_id;
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  const during = await scrapeUntil((t) => (sample(t, 'aes_sse_clients', { process: 'gateway' }) ?? 0) >= 1);
  expect(sample(during, 'aes_sse_clients', { process: 'gateway' })).toBeGreaterThanOrEqual(1);
  const events = await readSse(res);
  expect(events.map((e) => e.data.type)).toContain('agent_tool_response');
  expect(events[events.length - 1].data.type).toBe('agent_completed');

  // aes_tasks is counted at scrape time and kept 5 s: the scrape above may have counted before the end.
  const text = await scrapeUntil((t) => (sample(t, 'aes_tasks', { status: 'completed' }) ?? 0) >= 1);
  const worker = { process: 'worker' };
  // `>=n` / `>n` when the value passes, else the value itself (shown by a failing toEqual).
  const atLeast = (v: number | undefined, n: number) => (v !== undefined && v >= n ? `>=${n}` : v);
  const above = (v: number | undefined, n: number) => (v !== undefined && v > n ? `>${n}` : v);
  const got = {
    completed: atLeast(sample(text, 'aes_tasks', { status: 'completed' }), 1),
    running: sample(text, 'aes_tasks', { status: 'running' }),
    promptTokens: atLeast(
      sample(text, 'aes_model_tokens_total', { ...worker, model: 'scripted-base', type: 'prompt' }),
      1,
    ),
    completionTokens: atLeast(
      sample(text, 'aes_model_tokens_total', { ...worker, model: 'scripted-base', type: 'completion' }),
      1,
    ),
    cost: above(sample(text, 'aes_model_cost_usd_total', { ...worker, model: 'scripted-base' }), 0),
    toolCalls: sample(text, 'aes_tool_calls_total', { ...worker, server: 'builtin', outcome: 'ok' }),
    modelTurns: sample(text, 'aes_step_duration_seconds_count', { ...worker, kind: 'model_turn' }),
    toolSteps: sample(text, 'aes_step_duration_seconds_count', { ...worker, kind: 'tool_call' }),
    queueWaits: sample(text, 'aes_task_queue_wait_seconds_count', worker),
    durations: sample(text, 'aes_task_duration_seconds_count', { ...worker, status: 'completed' }),
    // Two model turns that each wait 1 s before answering.
    durationSum: above(sample(text, 'aes_task_duration_seconds_sum', { ...worker, status: 'completed' }), 2),
    relayed: atLeast(sample(text, 'aes_relay_lag_seconds_count', { process: 'gateway' }), 1),
    submits: atLeast(sample(text, 'aes_http_requests_total', { method: 'POST', route: '/', status_class: '2xx' }), 1),
    streams: sample(text, 'aes_http_requests_total', {
      method: 'GET',
      route: '/tasks/:id/events',
      status_class: '2xx',
    }),
    sseAfter: sample(text, 'aes_sse_clients', { process: 'gateway' }),
    includeUp: sample(text, 'aes_metrics_include_up', {
      url: `http://127.0.0.1:${ctx.stack().env.WORKER_METRICS_PORT}/metrics`,
    }),
    gatewayCpu: above(sample(text, 'process_cpu_seconds_total', { process: 'gateway' }), 0),
    workerCpu: above(sample(text, 'process_cpu_seconds_total', worker), 0),
  };
  expect(got).toEqual({
    completed: '>=1',
    running: 0,
    promptTokens: '>=1',
    completionTokens: '>=1',
    cost: '>0',
    toolCalls: 1,
    modelTurns: 2,
    toolSteps: 1,
    queueWaits: 1,
    durations: 1,
    durationSum: '>2',
    relayed: '>=1',
    submits: '>=1',
    streams: 1,
    sseAfter: 0,
    includeUp: 1,
    gatewayCpu: '>0',
    workerCpu: '>0',
  });
  // One HELP/TYPE per family although both processes have the same process metrics; no task id as a label.
  expect(text.match(/^# TYPE process_cpu_seconds_total /gm)).toHaveLength(1);
  expect(text).not.toContain(taskId);
});

test('a worker killed under supervision is counted as a restart of it', async () => {
  const lines: string[] = [];
  let supervised: SupervisedStack | undefined;
  try {
    supervised = superviseStack(ctx.stack(), { log: (l) => lines.push(l), probeEveryMs: 500, backoffBaseMs: 100 });
    const before = await scrapeUntil((t) => sample(t, 'aes_component_restarts_total', { component: 'worker' }) === 0);
    expect(sample(before, 'aes_component_restarts_total', { component: 'gateway' })).toBe(0);
    ctx.stack().children.worker.proc.kill('SIGKILL');
    await waitUntil("the supervisor's 'worker is running again'", () => lines.includes('worker is running again'));
    const after = await scrapeUntil((t) => sample(t, 'aes_component_restarts_total', { component: 'worker' }) === 1);
    expect(sample(after, 'aes_component_restarts_total', { component: 'worker' })).toBe(1);
    // The new worker serves its metrics on the same port, included again (its counters start over).
    expect(
      sample(after, 'aes_metrics_include_up', {
        url: `http://127.0.0.1:${ctx.stack().env.WORKER_METRICS_PORT}/metrics`,
      }),
    ).toBe(1);
  } finally {
    await supervised?.close();
  }
});
