// Entry point of the gateway's start thread: makes the Temporal start calls of
// new runs (gRPC encoding and framing, the client's payload conversion) on an
// event loop of its own, so the main thread's SSE relay does not wait behind
// them. Its own connection; one thread per gateway process.
import { Client, Connection } from '@temporalio/client';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../../logger';
import type { FromThread, StartError, StartThreadConfig, ToThread } from './protocol';

const port = parentPort;
if (!port) throw new Error('start-thread/thread-main runs as a worker thread');
const config = workerData as StartThreadConfig;
const logger = createLogger({ level: config.logLevel, json: config.logJson, name: 'gateway-starts' });
// Lazy, as the main thread's: the gateway starts (and answers 503) while Temporal is down.
const connection = Connection.lazy({ address: config.address });
const client = new Client({ connection, namespace: config.namespace });
const send = (m: FromThread) => port.postMessage(m);

function toStartError(err: unknown): StartError {
  const e = err as { name?: unknown; message?: unknown; code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'number' ? e.code : typeof e?.cause?.code === 'number' ? e.cause.code : undefined;
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(code !== undefined && { code }),
  };
}

port.on('message', ({ id, req }: ToThread) => {
  connection
    .withDeadline(Date.now() + req.deadlineMs, () => client.workflow.start(req.workflowType, req.options))
    .then(
      () => send({ type: 'started', id }),
      (err) => {
        logger.debug({ err: (err as Error)?.message, workflowType: req.workflowType }, 'start failed');
        send({ type: 'failed', id, error: toStartError(err) });
      },
    );
});
send({ type: 'ready' });
