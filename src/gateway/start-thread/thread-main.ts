// Entry point of the gateway's start thread: makes the submit path's Temporal
// calls (a run's start, a new session's start, a continuation's session check
// and enqueue: gRPC encoding and framing, the client's payload conversion and
// encryption) on an event loop of its own, so the main thread's SSE relay does
// not wait behind them. Its own connection; one thread per gateway process.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../../common/logger';
import { submitCalls } from './calls';
import { codecDataConverter, codecFromKeys } from '../../common/codec/data-converter';
import type { FromThread, StartError, StartThreadConfig, ToThread } from './protocol';
import { setupTracing, tracingClientInterceptors, withTraceCarrier } from '../../common/telemetry/tracing';

const port = parentPort;
if (!port) throw new Error('start-thread/thread-main runs as a worker thread');
const config = workerData as StartThreadConfig;
const logger = createLogger({
  level: config.logLevel,
  format: config.logJson ? 'json' : 'pretty',
  name: 'gateway-starts',
});
// Before the client: its interceptor starts the calls' spans and puts their context in the workflows' headers.
const tracing = config.tracing
  ? setupTracing('aes-gateway', config.tracing, { logger, resource: { 'thread.name': 'gateway-starts' } })
  : undefined;
// Lazy, as the main thread's: the gateway starts (and answers 503) while Temporal is down.
const connection = Connection.lazy({ address: config.address });
const dataConverter = config.payloadKeys ? codecDataConverter(codecFromKeys(config.payloadKeys)) : undefined;
const calls = submitCalls(
  new Client({ connection, namespace: config.namespace, dataConverter, interceptors: tracingClientInterceptors() }),
  connection,
);
const send = (m: FromThread) => port.postMessage(m);

function toStartError(err: unknown): StartError {
  const e = err as { name?: unknown; message?: unknown; code?: unknown; cause?: { code?: unknown } };
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  // The client's WorkflowNotFoundError carries no code; the gateway's mapping reads NOT_FOUND as a 404.
  const code =
    typeof e?.code === 'number'
      ? e.code
      : typeof e?.cause?.code === 'number'
        ? e.cause.code
        : name === 'WorkflowNotFoundError'
          ? GrpcStatus.NOT_FOUND
          : undefined;
  return {
    name,
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(code !== undefined && { code }),
  };
}

async function run(msg: ToThread): Promise<FromThread> {
  switch (msg.call) {
    case 'start':
      await calls.start(msg.req);
      return { type: 'done', id: msg.id };
    case 'describe':
      return { type: 'done', id: msg.id, value: await calls.describe(msg.req) };
    case 'enqueue':
      await calls.enqueue(msg.req);
      return { type: 'done', id: msg.id };
    case 'flush':
      await tracing?.forceFlush();
      return { type: 'done', id: msg.id };
  }
}

port.on('message', (msg: ToThread) => {
  withTraceCarrier(msg.trace, () => run(msg)).then(send, (err) => {
    logger.debug({ err: (err as Error)?.message, call: msg.call }, 'call failed');
    send({ type: 'failed', id: msg.id, error: toStartError(err) });
  });
});
send({ type: 'ready' });
