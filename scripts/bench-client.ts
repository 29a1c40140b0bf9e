// The bench's measuring HTTP client, in a process of its own. The bench process
// also serves the scripted model and follows every task's events in Redis; a
// response that arrived while that work held its event loop would be timed
// late, and its garbage collections would land in the figures. Here nothing
// runs but the timed requests. Jobs come and results go over the IPC channel,
// between measurements only.
//
//   fork('scripts/bench-client.ts')  (see bench-client-host.ts)
import { performance } from 'node:perf_hooks';
import { closedLoop, request, target } from './bench-http';

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
  /** Return the response bodies (for the task ids of submits). */
  keepBodies?: boolean;
}

export interface ClientResult {
  /** Call to last body byte, per request in job order; NaN when the request failed. */
  ms: number[];
  /** HTTP status per request; 0 when the request failed. */
  status: number[];
  bodies?: string[];
  /** Server-Timing header per request, with the bodies. */
  serverTiming?: string[];
}

export type ClientMessage = { id: number; warmHealthz: { base: string; n: number } } | { id: number; job: ClientJob };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runJob(job: ClientJob): Promise<ClientResult> {
  const t = target(job.base, job.key, job.rate ? 256 : job.concurrency);
  const send = (r: RequestSpec) => request(t, r.method, r.path, r.body);
  const n = job.requests.length;
  const out: ClientResult = {
    ms: new Array(n).fill(NaN),
    status: new Array(n).fill(0),
    bodies: job.keepBodies ? new Array(n).fill('') : undefined,
    serverTiming: job.keepBodies ? new Array(n).fill('') : undefined,
  };
  // The warm-up goes through the very code the measured requests use, so the
  // client's own optimisation of it is done before the first timed request.
  const w = job.warmup.length;
  const scratch: ClientResult = { ms: new Array(w).fill(NaN), status: new Array(w).fill(0), bodies: job.keepBodies ? new Array(w).fill('') : undefined };
  const oneOf = (specs: RequestSpec[], into: ClientResult) => async (i: number) => {
    try {
      const r = await send(specs[i]);
      into.ms[i] = r.ms;
      into.status[i] = r.status;
      if (into.bodies) into.bodies[i] = r.body;
      if (into.serverTiming) into.serverTiming[i] = r.serverTiming ?? '';
    } catch {
      // stays NaN / 0: counted as an error
    }
  };
  await closedLoop(w, job.concurrency, oneOf(job.warmup, scratch));
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

process.on('message', (msg: ClientMessage) => {
  const work =
    'job' in msg
      ? runJob(msg.job)
      : (async () => {
          // JIT warm-up of this process's HTTP client paths, so the first
          // measured phase does not time the client's own optimisation.
          const t = target(msg.warmHealthz.base, null, 1);
          for (let i = 0; i < msg.warmHealthz.n; i++) await request(t, 'GET', '/healthz').catch(() => undefined);
          t.agent.destroy();
          return undefined;
        })();
  work.then(
    (result) => process.send!({ id: msg.id, result }),
    (err: unknown) => process.send!({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
