// Entry point of the worker's token thread: runs model streams (HTTP read,
// chunk parse, relay publish) on an event loop of its own, so a token waits
// neither for the main thread's workflow activations nor for its heap's
// garbage collections. Its own OpenAI and Redis clients; one per process.
import { parentPort, workerData } from 'node:worker_threads';
import OpenAI from 'openai';
import { streamModelTurn } from '../../../activities/model-stream';
import type { TurnProgress } from '../../../activities/model-stream';
import { createLogger } from '../../common/logger';
import { commandClient } from '../../common/redis';
import { EventPublisher } from '../../common/relay/publisher';
import { osThreadId } from '../thread-priority';
import { createHttpFetch } from './http-fetch';
import type { FromThread, StreamError, StreamThreadConfig, ToThread } from './protocol';

/** Progress goes to the main thread (for heartbeats) at most this often. */
const PROGRESS_MS = 500;
/** Longest a stream waits for the thread's Redis connection at start-up. */
const REDIS_WAIT_MS = 2000;

const port = parentPort;
if (!port) throw new Error('thread-main runs as a worker thread');
const config = workerData as StreamThreadConfig;
const logger = createLogger({
  level: config.logLevel,
  format: config.logJson ? 'json' : 'pretty',
  name: 'worker-tokens',
});
const openai = new OpenAI({
  apiKey: config.openai.apiKey,
  baseURL: config.openai.baseURL,
  // Temporal owns retries (activity retry policy), so the client must not add its own.
  maxRetries: 0,
  timeout: config.openai.timeoutMs,
  // node:http under the SDK: a token skips the WHATWG stream layer (see http-fetch.ts).
  fetch: createHttpFetch(),
});
const redis = commandClient(config.redisUrl, logger, 'worker-tokens');
const publisher = new EventPublisher({ redis, logger, ttlMs: config.ttlMs });
// Commands fail fast while Redis is not connected (enableOfflineQueue off), so
// a stream that began before the connection would drop its first events. Wait
// for it, but not for ever: with Redis down the task goes on without a relay.
const connected = new Promise<void>((resolve) => {
  redis.once('ready', () => resolve());
  setTimeout(resolve, REDIS_WAIT_MS).unref();
});
const running = new Map<number, AbortController>();
const send = (m: FromThread) => port.postMessage(m);

function toStreamError(err: unknown): StreamError {
  const e = err as { name?: unknown; message?: unknown; status?: unknown };
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
  };
}

async function run(id: number, msg: Extract<ToThread, { type: 'run' }>): Promise<void> {
  const abort = new AbortController();
  running.set(id, abort);
  const p: TurnProgress = msg.progress;
  let sent = '';
  const beat = setInterval(() => {
    const key = `${p.published}:${p.content.length}:${p.thinking.length}:${p.chunks}`;
    if (key !== sent) send({ type: 'progress', id, progress: { ...p } });
    sent = key;
  }, PROGRESS_MS);
  try {
    await connected;
    const outcome = await streamModelTurn(
      { openai, publisher, idleMs: config.openai.idleMs },
      msg.req,
      p,
      abort.signal,
    );
    send({ type: 'done', id, outcome });
  } catch (err) {
    send({ type: 'failed', id, error: toStreamError(err) });
  } finally {
    clearInterval(beat);
    running.delete(id);
  }
}

port.on('message', (msg: ToThread) => {
  if (msg.type === 'run') void run(msg.id, msg);
  else running.get(msg.id)?.abort();
});
void connected.then(() => send({ type: 'ready', tid: osThreadId() }));
