// The processes the bench starts beside the stack, and how it starts them. This
// file is their entry point (`servers.ts <kind> [args]`), each a Node process of
// its own: what measures the service, or what the same work costs on these
// cores without it. None is part of the service.
//
//   client                                   the measuring client (forked; jobs and results over IPC)
//   baseline <redis-url> <key>               bare Express + one Redis GET (the request rows' baseline)
//   bare-publisher <redis-url> <model-url>   the worker's side of a bare token relay
//   bare-sse <redis-url> <publisher-port>    the gateway's side of a bare token relay
//   express stock|born                       the express phase's servers: one JSON route on
//                                            http.createServer or createExpressServer
//
// The servers print their port as one JSON line on stdout, then serve until SIGTERM.
// The floors' worker is dag.ts's own entry point.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import express from 'express';
import Redis from 'ioredis';
import { createExpressServer } from '../src/common/http/express-server';
import { TS_LOADER_ARGS } from '../src/common/ts-loader';
import type { BenchOptions } from './main';
import { closedLoop, fmtMs, PROFILE_ENV, request, sleep, summarize, table, target } from './measure';

const ROOT = path.resolve(__dirname, '..');

// ---- starting them --------------------------------------------------------------------

/**
 * Starts one of the bench's own entry points (a file of this folder) with its
 * stdout piped for `announced`. Neither profiled nor given the stack's
 * NODE_OPTIONS: it is a reference, not what is measured.
 */
export function spawnEntry(file: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...TS_LOADER_ARGS, path.join(__dirname, file), ...args], {
    cwd: ROOT,
    env: { ...env, NODE_OPTIONS: '', [PROFILE_ENV]: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** SIGTERM, and resolves once the child has exited (at once if it already has). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The child side of `announced`: prints one JSON line on stdout. */
export function announce(what: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(what)}\n`);
}

/** The first JSON object with `key` that a child prints on a line of its stdout (see `announce`). */
export function announced<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n').filter((l) => l.startsWith(`{"${key}":`))) {
        try {
          return resolve(JSON.parse(line) as T);
        } catch {
          // the line is not complete yet
        }
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${child.spawnargs.slice(2).join(' ')} exited (${code}) before it was ready`)),
    );
  });
}

export const waitForPort = async (child: ChildProcess): Promise<number> =>
  (await announced<{ port: number }>(child, 'port')).port;

/** Serves `server` on a free loopback port, announces `{"port":N}`, and on SIGTERM closes it (its keep-alive connections too), then calls `onStop`. */
async function serveAndAnnounce(server: http.Server, onStop: () => void = () => undefined): Promise<void> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  announce({ port: (server.address() as AddressInfo).port });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    onStop();
  });
}

// ---- the measuring client -------------------------------------------------------------
// The bench process also serves the scripted model and follows every task's events in Redis; a
// response that arrived while that work held its event loop would be timed late, and its garbage
// collections would land in the figures. In the client nothing runs but the timed requests; jobs
// come and results go over the IPC channel, between measurements only.

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
}

export interface ClientJob {
  base: string;
  /** Bearer key; null sends none. */
  key: string | null;
  /** Closed-loop clients (no think time); ignored when `rate` is set. */
  concurrency: number;
  /** Sent first, unmeasured, by the same clients. */
  warmup: RequestSpec[];
  requests: RequestSpec[];
  /** Open loop: requests start at this steady rate per second, whatever the answers do. */
  rate?: number;
  /** Return the response bodies and Server-Timing headers (for the task ids of submits). */
  keepBodies?: boolean;
}

export interface ClientResult {
  /** Call to last body byte, per request in job order; NaN when the request failed. */
  ms: number[];
  /** HTTP status per request; 0 when the request failed. */
  status: number[];
  bodies?: string[];
  serverTiming?: string[];
}

type ClientMessage = { id: number; warmHealthz: { base: string; n: number } } | { id: number; job: ClientJob };

export interface BenchClient {
  readonly pid: number | undefined;
  run(job: ClientJob): Promise<ClientResult>;
  /** n unmeasured GET /healthz, to warm the client's own code. */
  warm(base: string, n: number): Promise<void>;
  close(): void;
}

export function startBenchClient(env: NodeJS.ProcessEnv): BenchClient {
  const child: ChildProcess = fork(__filename, ['client'], {
    // A young generation big enough that a phase sees few or no scavenges in the client.
    execArgv: [...TS_LOADER_ARGS, '--max-semi-space-size=32'],
    env: { ...env, NODE_OPTIONS: '', [PROFILE_ENV]: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  child.on('message', (msg: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.error !== undefined) w?.reject(new Error(`bench client: ${msg.error}`));
    else w?.resolve(msg.result);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`bench client exited (${code})`));
    waiting.clear();
  });
  const call = <T>(msg: Omit<ClientMessage, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      child.send({ ...msg, id } as ClientMessage);
    });
  return {
    pid: child.pid,
    run: (job) => call<ClientResult>({ job }),
    warm: (base, n) => call<void>({ warmHealthz: { base, n } }),
    close: () => void (child.connected && child.disconnect()),
  };
}

const resultOf = (n: number, keepBodies: boolean | undefined): ClientResult => ({
  ms: new Array(n).fill(NaN),
  status: new Array(n).fill(0),
  bodies: keepBodies ? new Array(n).fill('') : undefined,
  serverTiming: keepBodies ? new Array(n).fill('') : undefined,
});

async function runJob(job: ClientJob): Promise<ClientResult> {
  const t = target(job.base, job.key, job.rate ? 256 : job.concurrency);
  const oneOf = (specs: RequestSpec[], into: ClientResult) => async (i: number) => {
    try {
      const r = await request(t, specs[i].method, specs[i].path, specs[i].body);
      into.ms[i] = r.ms;
      into.status[i] = r.status;
      if (into.bodies) into.bodies[i] = r.body;
      if (into.serverTiming) into.serverTiming[i] = r.serverTiming ?? '';
    } catch {
      // stays NaN / 0: counted as an error
    }
  };
  // The warm-up goes through the very code the measured requests use, so the
  // client's own optimisation of it is done before the first timed request.
  await closedLoop(job.warmup.length, job.concurrency, oneOf(job.warmup, resultOf(job.warmup.length, job.keepBodies)));
  const n = job.requests.length;
  const out = resultOf(n, job.keepBodies);
  const one = oneOf(job.requests, out);
  if (job.rate) {
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const wait = t0 + (i * 1000) / job.rate - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(one(i));
    }
    await Promise.all(pending);
  } else await closedLoop(n, job.concurrency, one);
  t.agent.destroy();
  return out;
}

async function client(): Promise<void> {
  const warmHealthz = async (base: string, n: number) => {
    const t = target(base, null, 1);
    for (let i = 0; i < n; i++) await request(t, 'GET', '/healthz').catch(() => undefined);
    t.agent.destroy();
  };
  process.on('message', (msg: ClientMessage) => {
    const work = 'job' in msg ? runJob(msg.job) : warmHealthz(msg.warmHealthz.base, msg.warmHealthz.n);
    work.then(
      (result) => process.send!({ id: msg.id, result }),
      (err: unknown) => process.send!({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}

// ---- the reference servers ------------------------------------------------------------

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

/** POST `body` as JSON over `agent`, handing the response to `onResponse`; `onError` on a failed request. */
function postJson(
  url: URL,
  body: unknown,
  agent: http.Agent,
  onResponse: (res: http.IncomingMessage) => void,
  onError: () => void,
): void {
  const json = JSON.stringify(body);
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) };
  const req = http.request(
    { host: url.hostname, port: url.port, method: 'POST', path: url.pathname, agent, headers },
    onResponse,
  );
  req.on('error', onError);
  req.end(json);
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
  const completions = new URL(`${new URL(modelUrl).pathname.replace(/\/$/, '')}/chat/completions`, modelUrl);
  const agent = new http.Agent({ keepAlive: true });
  const relay = (channel: string, message: string) => {
    const publish = (m: string) => void redis.publish(channel, m).catch(() => undefined);
    const end = () => publish(BARE_RELAY_END);
    const body = { model: 'scripted-base', stream: true, messages: [{ role: 'user', content: message }] };
    const onDelta = (content: string) => publish(JSON.stringify({ type: 'agent_response', content }));
    const read = (res: http.IncomingMessage) => {
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => (buf = contentDeltas(buf + chunk, onDelta)));
      res.on('end', end);
      res.on('error', end);
    };
    postJson(completions, body, agent, read, end);
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
    const job = { channel, message: String(req.body?.message ?? '') };
    const failed = () => void (clients.delete(channel), res.end());
    postJson(new URL(`http://127.0.0.1:${publisherPort}/run`), job, agent, (r) => r.resume(), failed);
  });
  await serveAndAnnounce(http.createServer(app), () => {
    agent.destroy();
    sub.disconnect();
  });
}

// ---- the express phase ----------------------------------------------------------------
// What Express's per-request prototype change costs, and what createExpressServer
// (src/common/http/express-server.ts) gets back: two servers serve the same JSON route, one on
// http.createServer(app), one on createExpressServer(app); the measuring client times closed loops
// of 1 and 8 clients against each in turn, and each server reports its own GC pauses.

/** One side: a JSON route shaped like the gateway's status answer, counting its own GC pauses (GET /gc, POST /gc/reset). */
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

const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
const statusReads = (k: number): RequestSpec[] =>
  Array.from({ length: k }, (_, i) => ({ method: 'GET', path: `/status?n=${i}` }));

/** One row: n requests of `concurrency` clients against one server, with the GC pauses the server saw meanwhile. */
async function expressRow(
  c: BenchClient,
  s: { mode: string; base: string },
  concurrency: number,
  round: number,
  n: number,
) {
  await c.run({ base: s.base, key: null, concurrency, warmup: statusReads(1000), requests: [] });
  await fetch(`${s.base}/gc/reset`, { method: 'POST' });
  const r = await c.run({ base: s.base, key: null, concurrency, warmup: [], requests: statusReads(n) });
  const gc = (await (await fetch(`${s.base}/gc`)).json()) as { minor: number[]; major: number[] };
  const lat = summarize(r.ms.filter((v, i) => r.status[i] === 200 && Number.isFinite(v)));
  const pauses = (v: number[]) => [String(v.length), `${fmtMs(sum(v))} / ${fmtMs(Math.max(0, ...v))}`];
  return [
    s.mode === 'stock' ? 'http.createServer(app)' : 'createExpressServer(app)',
    String(concurrency),
    String(round),
    n - lat.count ? `${lat.count} (${n - lat.count} failed)` : String(lat.count),
    ...[lat.p50, lat.p99, lat.max].map(fmtMs),
    ...pauses(gc.minor),
    ...pauses(gc.major),
  ];
}

/** The express phase: rounds of 1 and 8 clients against both servers, alternating, then one table. */
export async function expressPhase(opts: Pick<BenchOptions, 'expressRequests' | 'expressRounds'>): Promise<void> {
  const start = async (mode: string) => {
    const child = spawnEntry('servers.ts', ['express', mode], process.env);
    return { mode, child, base: `http://127.0.0.1:${await waitForPort(child)}` };
  };
  const servers = [await start('stock'), await start('born')];
  const c = startBenchClient(process.env);
  const head =
    'server|clients|round|n|p50 ms|p99 ms|max ms|scavenges|scavenge ms (sum / max)|full GCs|full GC ms (sum / max)';
  const rows: string[][] = [head.split('|')];
  try {
    for (const s of servers) await c.warm(s.base, 3000);
    for (let round = 1; round <= opts.expressRounds; round++) {
      // Alternating servers within a round spreads any drift of the machine over both.
      for (const concurrency of [1, 8]) {
        for (const s of servers) {
          rows.push(await expressRow(c, s, concurrency, round, opts.expressRequests));
          process.stderr.write(`[bench express] ${rows.at(-1)!.join('  ')}\n`);
        }
      }
    }
  } finally {
    c.close();
    await Promise.all(servers.map((s) => stopChild(s.child)));
  }
  console.log(
    `\n-- Express 5 on http.createServer vs createExpressServer: GET /status (JSON), ${opts.expressRequests} requests per row --`,
  );
  console.log(`${table(rows)}\n`);
  console.log('Both servers run the same app; only the server differs. Express re-parents every request and response');
  console.log('(Object.setPrototypeOf) unless they are born with its prototypes; the GC columns show what that costs.');
  console.log(
    'Closed loops, no think time, measured by the bench client in its own process after 1000 warm-up requests.\n',
  );
}

const KINDS: Record<string, (...args: string[]) => Promise<void>> = {
  client,
  baseline,
  'bare-publisher': barePublisher,
  'bare-sse': bareSse,
  express: expressServer,
};

if (require.main === module) {
  const [kind, ...args] = process.argv.slice(2);
  const serve = KINDS[kind];
  if (!serve || args.some((a) => !a)) throw new Error(`usage: servers.ts ${Object.keys(KINDS).join('|')} <args>`);
  serve(...args).catch((err) => {
    process.stderr.write(`bench ${kind} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
