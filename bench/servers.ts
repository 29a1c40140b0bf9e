// The bench's reference servers, each a Node process of its own (an entry
// point: spawnEntry('servers.ts', [kind, ...args])). Each prints its port as one
// JSON line on stdout, then serves until SIGTERM. None is part of the service:
// they are what the same work costs on these cores without it.
//
//   baseline <redis-url> <key>                 bare Express + one Redis GET (the request rows' baseline)
//   bare-publisher <redis-url> <model-url>     the worker's side of a bare token relay
//   bare-sse <redis-url> <publisher-port>      the gateway's side of a bare token relay
//   express stock|born                         `npm run bench:express`: one JSON route on
//                                              http.createServer or createExpressServer
import http from 'node:http';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import express from 'express';
import Redis from 'ioredis';
import { createExpressServer } from '../src/common/http/express-server';
import { serveAndAnnounce } from './stack';

/** The message a bare relay publishes when the model's stream has ended. */
export const BARE_RELAY_END = '{"type":"end"}';

/** The least an Express route backed by one Redis GET can cost: GET, JSON.parse, res.json, like the status route. */
async function baseline(redisUrl: string, key: string): Promise<void> {
  const redis = new Redis(redisUrl);
  await redis.ping();
  const app = express();
  app.disable('x-powered-by');
  app.get('/get', async (_req, res) => {
    const raw = await redis.get(key);
    res.json(raw ? JSON.parse(raw) : null);
  });
  await serveAndAnnounce(http.createServer(app), () => redis.disconnect());
}

/** The content deltas of the complete `data:` lines of a streamed chat completion; returns what is left of buf. */
function contentDeltas(buf: string, onDelta: (content: string) => void): string {
  let i: number;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    try {
      const content = (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]
        ?.delta?.content;
      if (content) onDelta(content);
    } catch {
      // not a chunk: the bench counts the token as missing
    }
  }
  return buf;
}

/**
 * The least the worker's side of a token relay can cost: POST /run
 * {"channel","message"} answers 202, reads the model's streamed reply over
 * keep-alive node:http and PUBLISHes each content delta; BARE_RELAY_END at the
 * end. No Temporal, no OpenAI SDK, no event log, no heartbeats.
 */
async function barePublisher(redisUrl: string, modelUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, { connectionName: 'bench-bare-publisher' });
  await redis.ping();
  const model = new URL(modelUrl);
  const agent = new http.Agent({ keepAlive: true });
  const relay = (channel: string, message: string) => {
    const body = JSON.stringify({
      model: 'scripted-base',
      stream: true,
      messages: [{ role: 'user', content: message }],
    });
    const publish = (m: string) => void redis.publish(channel, m).catch(() => undefined);
    const end = () => publish(BARE_RELAY_END);
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request(
      {
        host: model.hostname,
        port: model.port,
        method: 'POST',
        path: `${model.pathname.replace(/\/$/, '')}/chat/completions`,
        agent,
        headers,
      },
      (res) => {
        res.setEncoding('utf8');
        let buf = '';
        res.on(
          'data',
          (chunk: string) =>
            (buf = contentDeltas(buf + chunk, (content) =>
              publish(JSON.stringify({ type: 'agent_response', content })),
            )),
        );
        res.on('end', end);
        res.on('error', end);
      },
    );
    req.on('error', end);
    req.end(body);
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const job = JSON.parse(raw) as { channel: string; message: string };
      res.writeHead(202).end();
      relay(job.channel, job.message);
    });
  });
  await serveAndAnnounce(server, () => {
    agent.destroy();
    redis.disconnect();
  });
}

/**
 * The least the gateway's side of a token relay can cost: Express, POST /
 * subscribes one shared subscriber to a fresh channel, asks the publisher to
 * stream the reply into it, and writes each message as an SSE `data:` line
 * until the end marker. No auth, no validation, no Temporal, no catch-up.
 */
async function bareSse(redisUrl: string, publisherPort: string): Promise<void> {
  const sub = new Redis(redisUrl, { connectionName: 'bench-bare-subscriber' });
  await sub.ping();
  const agent = new http.Agent({ keepAlive: true });
  const clients = new Map<string, express.Response>();
  sub.on('message', (channel: string, message: string) => {
    const res = clients.get(channel);
    if (!res) return;
    if (message !== BARE_RELAY_END) return void res.write(`data: ${message}\n\n`);
    clients.delete(channel);
    res.end();
    void sub.unsubscribe(channel).catch(() => undefined);
  });
  let next = 0;
  const app = express();
  app.disable('x-powered-by');
  app.post('/', express.json(), async (req, res) => {
    const channel = `bench:bare:${process.pid}:${next++}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    clients.set(channel, res);
    await sub.subscribe(channel);
    const body = JSON.stringify({ channel, message: String(req.body?.message ?? '') });
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const run = http.request(
      { host: '127.0.0.1', port: Number(publisherPort), method: 'POST', path: '/run', agent, headers },
      (r) => r.resume(),
    );
    run.on('error', () => void (clients.delete(channel), res.end()));
    run.end(body);
  });
  await serveAndAnnounce(http.createServer(app), () => {
    agent.destroy();
    sub.disconnect();
  });
}

/**
 * One side of `npm run bench:express`: a JSON route shaped like the gateway's
 * status answer, on http.createServer (stock) or createExpressServer (born),
 * counting its own GC pauses (GET /gc, POST /gc/reset).
 */
async function expressServer(mode: string): Promise<void> {
  if (mode !== 'stock' && mode !== 'born') throw new Error('usage: servers.ts express stock|born');
  const pauses = { minor: [] as number[], major: [] as number[] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      (kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : pauses.major).push(e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const doc = {
    task_id: 'task_x',
    session: 'sess_x',
    status: 'completed',
    progress: 1,
    current_step: '1',
    error: null,
    metadata: {},
    created_at: new Date().toISOString(),
  };
  app.get('/status', (req, res) => void res.json({ ...doc, asked: req.query.n ?? null }));
  app.get('/gc', (_req, res) => void res.json(pauses));
  app.post('/gc/reset', (_req, res) => {
    pauses.minor = [];
    pauses.major = [];
    res.status(204).end();
  });
  await serveAndAnnounce(mode === 'born' ? createExpressServer(app) : http.createServer(app));
}

const SERVERS: Record<string, (...args: string[]) => Promise<void>> = {
  baseline,
  'bare-publisher': barePublisher,
  'bare-sse': bareSse,
  express: expressServer,
};

if (require.main === module) {
  const [kind, ...args] = process.argv.slice(2);
  const serve = SERVERS[kind];
  if (!serve || args.some((a) => !a)) throw new Error(`usage: servers.ts ${Object.keys(SERVERS).join('|')} <args>`);
  serve(...args).catch((err) => {
    process.stderr.write(`bench server ${kind} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
