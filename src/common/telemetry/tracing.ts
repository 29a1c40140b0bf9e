// OpenTelemetry traces, set up once per process (and per thread that makes
// Temporal calls: the gateway's start thread): a tracer provider with a batch
// processor and the OTLP/HTTP exporter, registered as the global one with W3C
// trace-context propagation. Only when OTEL_EXPORTER_OTLP_ENDPOINT is set;
// without it nothing is installed, the OpenTelemetry API stays a no-op and no
// interceptor or middleware is added anywhere (each caller asks `tracing()`).
//
// What spans carry: names (HTTP method and route template, Temporal's
// `StartWorkflow:agentTask`, `RunActivity:modelTurn`...), ids (workflow, run,
// activity), HTTP status codes and errors. Never a message, a tool's arguments
// or results, a header, a key or a query string: payloads stay in Temporal,
// encrypted, and the Temporal interceptors put only ids in spans.
import { context, diag, DiagLogLevel, propagation, ROOT_CONTEXT, trace, type DiagLogger } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config';

/** What a process (or thread) sets tracing up from: the two documented variables. */
export type TracingConfig = Partial<Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>>;

export interface Tracing {
  readonly serviceName: string;
  readonly resource: Resource;
  /** The batch processor every span of this process goes through (the worker hands it the workflows' spans too). */
  readonly processor: SpanProcessor;
  /** Exports what is buffered (a stopping process, a test waiting for its spans). */
  forceFlush(): Promise<void>;
  /** Flushes, stops exporting and unregisters the provider. */
  shutdown(): Promise<void>;
}

/** W3C trace context as text (traceparent, tracestate): how a context crosses a thread boundary. */
export type TraceCarrier = Record<string, string>;

export interface SetupOptions {
  /** Gets OpenTelemetry's own warnings (a failed export), at most one line a minute. */
  logger?: Logger;
  /** More resource attributes, e.g. `thread.name` for a thread's own provider. */
  resource?: Record<string, string>;
}

let installed: Tracing | undefined;

/** This process's (thread's) tracing, if `setupTracing` installed it. */
export function tracing(): Tracing | undefined {
  return installed;
}

/**
 * Installs tracing for this process when `config.OTEL_EXPORTER_OTLP_ENDPOINT` is set
 * (the exporter reads it, and the other standard OTEL_EXPORTER_OTLP_* and OTEL_BSP_*
 * variables, from the environment itself); returns undefined, having installed
 * nothing, when it is not. `defaultService`: `aes-gateway` or `aes-worker`, unless
 * OTEL_SERVICE_NAME names the service.
 */
export function setupTracing(
  defaultService: string,
  config: TracingConfig,
  opts: SetupOptions = {},
): Tracing | undefined {
  const { logger } = opts;
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  if (installed) return installed;
  const serviceName = config.OTEL_SERVICE_NAME || defaultService;
  // The SDK is loaded only here: a process without an endpoint never loads it.
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const resources = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  // OTEL_RESOURCE_ATTRIBUTES are honoured; the service name is ours (or OTEL_SERVICE_NAME).
  const resource = resources.Resource.default()
    .merge(resources.envDetectorSync.detect())
    .merge(new resources.Resource({ ...opts.resource, 'service.name': serviceName })) as Resource;
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // AsyncLocalStorage context and W3C traceparent/tracestate (with baggage) propagation.
  provider.register();
  if (logger) diag.setLogger(throttledDiag(logger), DiagLogLevel.WARN);
  const self: Tracing = {
    serviceName,
    resource,
    processor,
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      if (installed !== self) return;
      installed = undefined;
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
  installed = self;
  logger?.info(
    { service: serviceName, otlp: originOf(config.OTEL_EXPORTER_OTLP_ENDPOINT) },
    'tracing: spans exported over OTLP/HTTP',
  );
  return self;
}

/** Flushes and stops this process's tracing, if any (graceful stops call it last). */
export async function shutdownTracing(): Promise<void> {
  await installed?.shutdown();
}

/** The Temporal client interceptors that start spans for client calls and carry the context in workflow headers; none without tracing. */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  if (!installed) return undefined;
  // Loaded only when tracing is on.
  const { OpenTelemetryWorkflowClientInterceptor } =
    require('@temporalio/interceptors-opentelemetry/lib/client') as typeof import('@temporalio/interceptors-opentelemetry/lib/client');
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/** The active context, serialized (traceparent, tracestate), to hand to another thread; undefined without tracing or a span. */
export function traceCarrier(): TraceCarrier | undefined {
  if (!installed) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length ? carrier : undefined;
}

/** Runs `fn` in the context `carrier` describes (another thread's span), or as is without one. */
export function withTraceCarrier<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  if (!carrier || !installed) return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, carrier), fn);
}

/** Only scheme, host and port are logged: an endpoint may carry credentials in its user info or query. */
function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return '(unparsable)';
  }
}

/**
 * OpenTelemetry's own warnings and errors (an export that failed: the collector is
 * down) as log lines, at most one a minute with a count of those left out, so a
 * collector that is away does not flood the logs.
 */
function throttledDiag(logger: Logger): DiagLogger {
  let last = 0;
  let dropped = 0;
  const log = (message: string, args: unknown[]) => {
    const now = Date.now();
    if (now - last < 60_000) {
      dropped++;
      return;
    }
    last = now;
    const detail = args
      .map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : undefined))
      .filter(Boolean);
    logger.warn(
      { otel: true, ...(detail.length && { detail: detail.join('; ') }), ...(dropped && { suppressed: dropped }) },
      `tracing: ${message}`,
    );
    dropped = 0;
  };
  const ignore = () => undefined;
  return { error: (m, ...a) => log(m, a), warn: (m, ...a) => log(m, a), info: ignore, debug: ignore, verbose: ignore };
}
