// The tracing set-up in process: nothing at all without an endpoint; with one,
// spans exported over OTLP/HTTP under the service's name, the context carried
// to another thread as text, request spans named by route template that stay
// active through body parsing, and workflow spans given ids only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { context, propagation, trace } from '@opentelemetry/api';
import type { WorkflowInfo } from '@temporalio/workflow';
import {
  setupTracing,
  shutdownTracing,
  traceCarrier,
  tracing,
  tracingClientInterceptors,
  withTraceCarrier,
} from '../../../src/common/telemetry/tracing';
import { requestSpans } from '../../../src/common/telemetry/request-spans';
import { workerTracing, workflowSpanSinks } from '../../../src/common/telemetry/worker-tracing';
import { waitUntil } from '../../support/wait-until';
import { OtlpReceiver } from './otlp-receiver';

afterEach(() => shutdownTracing());

test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is installed: no provider, interceptor, middleware or worker option', () => {
  expect(setupTracing('aes-gateway', {})).toBeUndefined();
  expect(setupTracing('aes-worker', { OTEL_SERVICE_NAME: 'named' })).toBeUndefined();
  expect(tracing()).toBeUndefined();
  expect(tracingClientInterceptors()).toBeUndefined();
  expect(requestSpans()).toBeUndefined();
  expect(workerTracing(undefined)).toEqual({});
  expect(traceCarrier()).toBeUndefined();
  expect(withTraceCarrier({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, () => 7)).toBe(7);
  // The API is the no-op one: spans record nothing, propagation writes nothing.
  const span = trace.getTracer('t').startSpan('s');
  expect(span.isRecording()).toBe(false);
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  expect(carrier).toEqual({});
});

describe('with an endpoint', () => {
  const receiver = new OtlpReceiver();
  let endpoint: string;
  beforeAll(async () => {
    endpoint = await receiver.start();
    // The exporter reads it (and the other OTEL_* variables) from the environment, as in the service's processes.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  });
  afterAll(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await receiver.close();
  });

  test('spans go to the collector under the service name (OTEL_SERVICE_NAME overrides); the context crosses threads as text; shutdown uninstalls', async () => {
    const t = setupTracing('aes-gateway', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'custom-name' })!;
    expect(t.serviceName).toBe('custom-name');
    expect(tracing()).toBe(t);
    expect(tracingClientInterceptors()?.workflow).toHaveLength(1);
    const tracer = trace.getTracer('test');
    const { carrier, traceId } = tracer.startActiveSpan('outer', (span) => {
      span.end();
      return { carrier: traceCarrier(), traceId: span.spanContext().traceId };
    });
    expect(carrier?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    // The other side: a span started in the carried context joins the trace.
    withTraceCarrier(carrier, () => tracer.startSpan('inner').end());
    await t.forceFlush();
    const mine = receiver.spans.filter((s) => s.traceId === traceId);
    expect(mine.map((s) => [s.name, s.service]).sort()).toEqual([
      ['inner', 'custom-name'],
      ['outer', 'custom-name'],
    ]);
    expect(mine.find((s) => s.name === 'inner')!.parentSpanId).toBe(mine.find((s) => s.name === 'outer')!.spanId);
    await shutdownTracing();
    expect(tracing()).toBeUndefined();
    expect(trace.getTracer('t').startSpan('s').isRecording()).toBe(false);
  });

  test('a request span joins the caller’s traceparent, is named by route template, and stays active past the body parser', async () => {
    const t = setupTracing('aes-gateway', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })!;
    const app = express();
    app.use(requestSpans()!);
    app.use(express.json());
    const seen: (string | undefined)[] = [];
    app.post('/things/:id', (_req, res) => {
      seen.push(trace.getActiveSpan()?.spanContext().traceId);
      res.status(201).json({});
    });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/things/thing_secret?token=query-secret-zq`,
        {
          method: 'POST',
          headers: {
            traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
            'content-type': 'application/json',
            authorization: 'Bearer key-123',
          },
          body: JSON.stringify({ message: 'hello there' }),
        },
      );
      expect(res.status).toBe(201);
      // A body that comes after the headers: the parser resumes from the socket's events.
      const slow = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: (server.address() as AddressInfo).port,
            path: '/things/2',
            method: 'POST',
            headers: {
              traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
              'content-type': 'application/json',
              'content-length': '2',
            },
          },
          (r) => {
            r.resume();
            resolve(r.statusCode!);
          },
        );
        req.on('error', reject);
        req.flushHeaders();
        setTimeout(() => req.end('{}'), 100);
      });
      expect(slow).toBe(201);
      expect(seen).toEqual([traceId, traceId]);
      // A request span ends on the response's 'finish': both requests' spans, once ended and exported.
      const [span] = await waitUntil(
        'the two request spans at the receiver',
        async () => {
          await t.forceFlush();
          return receiver.spans.filter((s) => s.traceId === traceId && s.attributes['http.route']);
        },
        (spans) => spans.length === 2,
        { timeoutMs: 5000 },
      );
      expect(span).toMatchObject({
        name: 'POST /things/:id',
        kind: 2,
        service: 'aes-gateway',
        parentSpanId: '00f067aa0ba902b7',
      });
      expect(span.attributes).toEqual({
        'http.request.method': 'POST',
        'http.route': '/things/:id',
        'http.response.status_code': 201,
      });
      const body = receiver.bodies.join('\n');
      for (const never of ['thing_secret', 'token', 'query-secret-zq', 'key-123', 'hello there'])
        expect(body).not.toContain(never);
    } finally {
      server.close();
    }
  });
});

test('workflow spans get the workflow’s ids and names, never its memo or search attributes', () => {
  const infos: unknown[] = [];
  const fake = (() => ({ export: { fn: (info: unknown) => void infos.push(info) } })) as unknown as Parameters<
    typeof workflowSpanSinks
  >[1];
  const sinks = workflowSpanSinks({} as never, fake);
  const info = {
    workflowId: 'task_1',
    runId: 'r1',
    workflowType: 'agentTask',
    taskQueue: 'q',
    namespace: 'default',
    attempt: 1,
    memo: { metadata: { secret: 'x' } },
    searchAttributes: { TaskAccount: ['alice'] },
    lastResult: 'the answer',
  } as unknown as WorkflowInfo;
  sinks.exporter.export.fn(info, []);
  expect(infos).toEqual([
    { workflowId: 'task_1', runId: 'r1', workflowType: 'agentTask', taskQueue: 'q', namespace: 'default', attempt: 1 },
  ]);
  expect(sinks.exporter.export.callDuringReplay).toBe(false);
});
