// The bench's measuring HTTP client, in a process of its own (an entry point:
// startBenchClient forks this file). The bench process also serves the scripted
// model and follows every task's events in Redis; a response that arrived while
// that work held its event loop would be timed late, and its garbage
// collections would land in the figures. In the child nothing runs but the
// timed requests; jobs come and results go over the IPC channel, between
// measurements only.
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { TS_LOADER_ARGS } from '../src/common/ts-loader';
import { closedLoop, request, sleep, target } from './measure';

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

// ---- the parent's side ---------------------------------------------------------

export function startBenchClient(env: NodeJS.ProcessEnv): BenchClient {
  const child: ChildProcess = fork(__filename, [], {
    // A young generation big enough that a phase sees few or no scavenges in the client.
    execArgv: [...TS_LOADER_ARGS, '--max-semi-space-size=32'],
    env: { ...env, NODE_OPTIONS: '' },
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

// ---- the child's side ----------------------------------------------------------

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

async function warmHealthz(base: string, n: number): Promise<undefined> {
  const t = target(base, null, 1);
  for (let i = 0; i < n; i++) await request(t, 'GET', '/healthz').catch(() => undefined);
  t.agent.destroy();
  return undefined;
}

if (require.main === module) {
  process.on('message', (msg: ClientMessage) => {
    const work = 'job' in msg ? runJob(msg.job) : warmHealthz(msg.warmHealthz.base, msg.warmHealthz.n);
    work.then(
      (result) => process.send!({ id: msg.id, result }),
      (err: unknown) => process.send!({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
