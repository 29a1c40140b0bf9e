// Traces end to end: a stack (embedded engine, worker, gateway) exporting to an
// in-test OTLP/HTTP receiver. A background run that calls a tool is one trace,
// from the caller's traceparent through the gateway's request span, the
// workflow start (made in process, or on the start thread while a stream is
// open), the agentTask workflow, to its model turns and its tool call; spans
// come from both services and carry no message text, tool argument or key. The
// traced run's history replays on a worker without tracing.
import crypto from 'node:crypto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { Stack } from '../../../src/dev/launcher/stack';
import { api, Api, KEY_A, postStream, startTestStack, waitUntil, withTemporal } from '../../e2e/helpers';
import { workflowBundle } from '../../workflows/env';
import { codecDataConverter, codecFromKeys } from '../../../src/common/codec/data-converter';
import { OtlpReceiver, ReceivedSpan } from './otlp-receiver';

jest.setTimeout(120_000);

const receiver = new OtlpReceiver();
let stack: Stack;
let call: Api;

beforeAll(async () => {
  const endpoint = await receiver.start();
  stack = await startTestStack({
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  call = api(stack);
});

afterAll(async () => {
  await stack?.stop();
  await receiver.close();
});

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const calc = (expression: string) => `[[tool name=calculate args={"expression":"${expression}"} turn=1]]`;

/** The spans of one trace, with a way to walk up from a span. */
function traceOf(traceId: string) {
  const spans = receiver.spans.filter((s) => s.traceId === traceId);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const named = (name: string, service?: string) =>
    spans.filter((s) => s.name === name && (service === undefined || s.service === service));
  const one = (name: string, service?: string) => {
    const found = named(name, service);
    expect(found.map((s) => `${s.service} ${s.name}`)).toEqual([`${service ?? found[0]?.service} ${name}`]);
    return found[0];
  };
  const parentOf = (s: ReceivedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const ancestors = (s: ReceivedSpan) => {
    const out: ReceivedSpan[] = [];
    for (let p = parentOf(s); p; p = parentOf(p)) out.push(p);
    return out;
  };
  return { spans, named, one, parentOf, ancestors };
}

/** Submits a background run that calls a tool, as a caller in trace `traceId`; resolves to its task id once it completed and its spans are in. */
async function tracedRun(traceId: string, callerSpanId: string, secret: string): Promise<string> {
  const r = await call('POST', '/', {
    body: { background: true, message: `${calc('6*7')} ${secret}`, metadata: { note: secret } },
    headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
  });
  expect(r.status).toBe(202);
  const taskId = r.json.task_id as string;
  await waitUntil(
    'the traced run to complete',
    async () => (await call('GET', `/tasks/${taskId}`)).json.status === 'completed',
  );
  // The workflow's span ends with it; the batch goes out within OTEL_BSP_SCHEDULE_DELAY.
  await waitUntil(
    "the run's workflow and tool spans at the receiver",
    async () =>
      traceOf(traceId).named('RunWorkflow:agentTask').length > 0 &&
      traceOf(traceId).named('RunActivity:runTool').length > 0,
  );
  return taskId;
}

/** The chain every traced run has: caller → gateway request → start → workflow → activities. */
function expectOneTrace(traceId: string, callerSpanId: string, taskId: string): { start: ReceivedSpan } {
  const t = traceOf(traceId);
  // The gateway's server span, named by route template, joined to the caller's traceparent.
  const request = t.one('POST /', 'aes-gateway');
  expect(request.kind).toBe(2);
  expect(request.parentSpanId).toBe(callerSpanId);
  expect(request.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/',
    'http.response.status_code': 202,
  });
  // The start of the task under it (its session, made for it, opens no workflow: lazy-sessions.ts).
  const start = t.one('StartWorkflow:agentTask', 'aes-gateway');
  expect(t.parentOf(start)).toBe(request);
  expect(start.attributes.temporalWorkflowId).toBe(taskId);
  expect(t.named('StartWorkflow:agentSession')).toEqual([]);
  // The workflow, on the worker, under the start.
  const workflow = t.one('RunWorkflow:agentTask', 'aes-worker');
  expect(t.parentOf(workflow)).toBe(start);
  expect(workflow.attributes).toMatchObject({ workflowId: taskId, workflowType: 'agentTask' });
  // Two model turns (the tool call, then the answer) and the tool call, each run under its workflow's StartActivity.
  const turns = t.named('RunActivity:modelTurn', 'aes-worker');
  expect(turns).toHaveLength(2);
  const tool = t.one('RunActivity:runTool', 'aes-worker');
  for (const a of [...turns, tool]) {
    expect(t.parentOf(a)?.name).toBe(`StartActivity:${a.name.split(':')[1]}`);
    expect(t.ancestors(a)).toEqual(expect.arrayContaining([workflow, start, request]));
    expect(a.attributes).toMatchObject({ temporalWorkflowId: taskId });
  }
  // The run's end (a local activity) too.
  expect(t.ancestors(t.one('StartActivity:publishEnd', 'aes-worker'))).toContain(workflow);
  return { start };
}

function expectNothingSecret(secret: string): void {
  const all = receiver.bodies.join('\n');
  expect(all).not.toContain(secret); // the message and the metadata
  expect(all).not.toContain('6*7'); // the tool's arguments
  expect(all).not.toContain(KEY_A); // the API key
  expect(all).not.toContain(stack.env.PAYLOAD_KEYS!.split(':')[1]); // the payload key
  expect(all.toLowerCase()).not.toContain('authorization');
  // The workflow's memo and search attributes stay out of its spans.
  for (const s of receiver.spans) expect(Object.keys(s.attributes)).not.toEqual(expect.arrayContaining(['memo']));
  for (const s of receiver.spans)
    expect(Object.keys(s.attributes)).not.toEqual(expect.arrayContaining(['searchAttributes']));
}

test('a background run that calls a tool is one trace: the gateway request, the workflow, its model turns and tool call', async () => {
  const traceId = hex(16);
  const callerSpanId = hex(8);
  const secret = `secret-${hex(8)}`;
  const taskId = await tracedRun(traceId, callerSpanId, secret);
  const { start } = expectOneTrace(traceId, callerSpanId, taskId);
  // No stream was open: the gateway started the run on its main thread.
  expect(start.resource['thread.name']).toBeUndefined();
  expectNothingSecret(secret);

  // A worker without tracing replays the traced run (tracing can be turned off with runs in flight).
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const history = await withTemporal(stack, (c) => c.workflow.getHandle(taskId).fetchHistory());
  const dataConverter = codecDataConverter(codecFromKeys(stack.env.PAYLOAD_KEYS!));
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), dataConverter }, history, taskId);
});

test('while a stream is open the start thread starts the run, and the trace goes through it the same way', async () => {
  // An open stream (a slow answer): the gateway now makes its submit calls on the start thread.
  const held = await postStream(stack, { message: '[[slow first=20000]] hold' });
  const reader = held.body!.getReader();
  await reader.read(); // its first event: the stream is subscribed
  try {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const secret = `secret-${hex(8)}`;
    const taskId = await tracedRun(traceId, callerSpanId, secret);
    const { start } = expectOneTrace(traceId, callerSpanId, taskId);
    expect(start.resource).toMatchObject({ 'service.name': 'aes-gateway', 'thread.name': 'gateway-starts' });
    expectNothingSecret(secret);
  } finally {
    await reader.cancel();
  }
});

test('a request is named by its route template, never by its path', async () => {
  const traceId = hex(16);
  const r = await call('GET', '/tasks/task_doesnotexist0123', {
    headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
  });
  expect(r.status).toBe(404);
  await waitUntil('the request span at the receiver', async () => traceOf(traceId).spans.some((s) => s.kind === 2));
  const request = traceOf(traceId).spans.find((s) => s.kind === 2)!;
  expect(request.name).toBe('GET /tasks/:id');
  expect(request.attributes).toMatchObject({ 'http.route': '/tasks/:id', 'http.response.status_code': 404 });
  expect(JSON.stringify(request)).not.toContain('task_doesnotexist0123');
});
