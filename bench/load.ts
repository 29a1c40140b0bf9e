// The load phase: many slow background tasks in flight at once, a crowd of SSE
// clients on their event streams, and the peak memory of every process of the
// stack while that lasts.
import { performance } from 'node:perf_hooks';
import type { Bench } from './main';
import { closedLoop, HttpTarget, openSse, request, summarize, Summary, target } from './measure';
import { readMem, RelayWatcher } from './stack';

/** Keys of the load phase's accounts (load0, load1, ...). */
export const loadKey = (i: number) => `bench-load-${i}-0123456789`;

export interface ProcessMem {
  beforeKiB?: number;
  peakSampledKiB?: number;
  /** VmHWM after the phase: the process's lifetime peak, which the load phase normally sets. */
  hwmKiB?: number;
}

export interface LoadResult {
  tasks: number;
  accepted: number;
  submitErrors: number;
  submit: Summary;
  submitSeconds: number;
  /** Accepted and not yet ended, at its highest. */
  peakInFlight: number;
  /** Model calls open at once, at the highest (bounded by the worker's activity slots). */
  peakModelCalls: number;
  ended: number;
  completed: number;
  /** Load start to the last task's end. */
  drainSeconds: number;
  timedOut: boolean;
  sse: {
    requested: number;
    opened: number;
    peakOpen: number;
    completed: number;
    tokens: number;
    seqGaps: number;
    failed: number;
  };
  statusSweep: Record<string, number>;
  mem: Record<string, ProcessMem>;
}

interface Accepted {
  id: string;
  at: number;
  key: string;
}

/** Samples VmRSS of each pid every `everyMs` and keeps the maximum seen. */
class RssSampler {
  readonly peakKiB: Record<string, number> = {};
  private readonly timer: NodeJS.Timeout;

  constructor(pids: Record<string, number | undefined>, everyMs: number) {
    const sample = () => {
      for (const [name, pid] of Object.entries(pids)) {
        const rss = readMem(pid).rssKiB;
        if (rss !== undefined) this.peakKiB[name] = Math.max(this.peakKiB[name] ?? 0, rss);
      }
    };
    sample();
    this.timer = setInterval(sample, everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** SSE clients on tasks' event streams: how many opened, completed, and saw their events in order. */
class SseCrowd {
  private readonly clients: {
    stream?: { status: number; done: Promise<void>; close(): void };
    failed: boolean;
    completed: boolean;
    tokens: number;
    lastSeq: number;
    gaps: number;
  }[] = [];
  private readonly opening: Promise<void>[] = [];
  openNow = 0;
  peakOpen = 0;

  constructor(private readonly sse: HttpTarget) {}

  get size(): number {
    return this.clients.length;
  }

  open(taskId: string, key: string): void {
    const c: (typeof this.clients)[number] = { failed: false, completed: false, tokens: 0, lastSeq: 0, gaps: 0 };
    this.clients.push(c);
    const onEvent = (ev: { data: any }) => {
      const seq = Number(ev.data?.seq);
      if (seq !== c.lastSeq + 1) c.gaps++;
      c.lastSeq = seq;
      if (ev.data?.type === 'agent_response') c.tokens++;
      if (ev.data?.type === 'agent_completed') c.completed = true;
    };
    const opened = (stream: NonNullable<typeof c.stream>) => {
      c.stream = stream;
      if (stream.status !== 200) return void (c.failed = true);
      this.peakOpen = Math.max(this.peakOpen, ++this.openNow);
      void stream.done.then(() => this.openNow--);
    };
    this.opening.push(
      openSse(this.sse, 'GET', `/tasks/${taskId}/events`, undefined, onEvent, { key }).then(
        opened,
        () => void (c.failed = true),
      ),
    );
  }

  /** Waits for the streams to end (they end right after their terminal event), at most 10 s, then closes the rest. */
  async finish(): Promise<LoadResult['sse']> {
    await Promise.all(this.opening);
    await Promise.race([
      Promise.all(this.clients.map((c) => c.stream?.done)),
      new Promise((r) => setTimeout(r, 10_000)),
    ]);
    for (const c of this.clients) c.stream?.close();
    const cs = this.clients;
    const sum = (f: (c: (typeof cs)[number]) => number) => cs.reduce((n, c) => n + f(c), 0);
    return {
      requested: cs.length,
      opened: cs.filter((c) => c.stream?.status === 200).length,
      peakOpen: this.peakOpen,
      completed: cs.filter((c) => c.completed).length,
      tokens: sum((c) => c.tokens),
      seqGaps: sum((c) => c.gaps),
      failed: cs.filter((c) => c.failed).length,
    };
  }
}

/** Peak in flight from the timeline (+1 at each 202, -1 at each end), and when the last task ended. */
function inFlight(accepted: Accepted[], watcher: RelayWatcher, t0: number): { peak: number; lastEnd: number } {
  const steps: [number, number][] = [];
  let lastEnd = t0;
  for (const a of accepted) {
    steps.push([a.at, 1]);
    const e = watcher.ended.get(a.id);
    if (!e) continue;
    steps.push([Math.max(e.at, a.at), -1]);
    lastEnd = Math.max(lastEnd, e.at);
  }
  steps.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of steps) peak = Math.max(peak, (now += d));
  return { peak, lastEnd };
}

/** The API's own word on every task afterwards (8 clients, so it does not skew the figures above). */
async function statusSweep(api: HttpTarget, accepted: Accepted[]): Promise<Record<string, number>> {
  const sweep: Record<string, number> = {};
  await closedLoop(accepted.length, 8, async (i) => {
    const r = await request(api, 'GET', `/tasks/${accepted[i].id}`, undefined, { key: accepted[i].key }).catch(
      () => undefined,
    );
    const s = !r
      ? 'request failed'
      : r.status === 200
        ? (JSON.parse(r.body) as { status: string }).status
        : `http ${r.status}`;
    sweep[s] = (sweep[s] ?? 0) + 1;
  });
  return sweep;
}

/** Submits the tasks over the accounts' keys, round robin, opening an SSE client on every k-th. */
async function submitAll(b: Bench, api: HttpTarget, crowd: SseCrowd, t0: number, timeoutMs: number) {
  const o = b.opts;
  const accepted: Accepted[] = [];
  const latencies: number[] = [];
  let errors = 0;
  const every = o.loadSse > 0 ? Math.max(1, Math.floor(o.loadTasks / o.loadSse)) : Infinity;
  await closedLoop(o.loadTasks, o.loadConcurrency, async (i) => {
    if (performance.now() - t0 > timeoutMs) return;
    const key = loadKey(i % o.loadAccounts);
    const body = {
      message: `[[slow delay=${o.loadDelayMs} tokens=${o.loadTokens}]] load ${i}`,
      background: true,
      streaming_tokens: true,
    };
    const r = await request(api, 'POST', '/', body, { key }).catch(() => undefined);
    if (r?.status !== 202) return void errors++;
    const id = (JSON.parse(r.body) as { task_id: string }).task_id;
    accepted.push({ id, at: performance.now(), key });
    latencies.push(r.ms);
    if (i % every === 0 && crowd.size < o.loadSse) crowd.open(id, key);
  });
  return { accepted, latencies, errors };
}

export async function loadPhase(b: Bench, pids: Record<string, number | undefined>): Promise<LoadResult> {
  const o = b.opts;
  const timeoutMs = Math.min(o.loadTimeoutS * 1000, b.left());
  const mem: Record<string, ProcessMem> = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, { beforeKiB: readMem(pid).rssKiB }]),
  );
  const sampler = new RssSampler(pids, 250);
  const api = target(b.gatewayUrl, b.apiKey, o.loadConcurrency);
  const crowd = new SseCrowd(target(b.gatewayUrl, b.apiKey, Infinity));
  let peakModelCalls = 0;
  const modelSampler = setInterval(() => (peakModelCalls = Math.max(peakModelCalls, b.model.stats().active)), 100);
  const t0 = performance.now();
  let accepted: Accepted[] = [];
  const progress = setInterval(() => {
    const ended = accepted.filter((a) => b.watcher.ended.has(a.id)).length;
    b.log(
      `load: ${accepted.length}/${o.loadTasks} accepted, ${ended} ended, ${accepted.length - ended} in flight, ${crowd.openNow} SSE open, ${b.model.stats().active} model calls open`,
    );
  }, 5000);
  const sub = await submitAll(b, api, crowd, t0, timeoutMs);
  accepted = sub.accepted;
  const submitSeconds = (performance.now() - t0) / 1000;
  b.log(`load: ${accepted.length} tasks accepted in ${submitSeconds.toFixed(1)} s; waiting for them to finish`);
  const missing = await b.watcher.waitAll(
    accepted.map((a) => a.id),
    Math.max(1000, timeoutMs - (performance.now() - t0)),
  );
  clearInterval(progress);
  clearInterval(modelSampler);
  const sse = await crowd.finish();
  sampler.stop();
  for (const [name, pid] of Object.entries(pids))
    Object.assign(mem[name], { peakSampledKiB: sampler.peakKiB[name], hwmKiB: readMem(pid).hwmKiB });
  const flight = inFlight(accepted, b.watcher, t0);
  const result: LoadResult = {
    tasks: o.loadTasks,
    accepted: accepted.length,
    submitErrors: sub.errors,
    submit: summarize(sub.latencies),
    submitSeconds,
    peakInFlight: flight.peak,
    peakModelCalls,
    ended: accepted.length - missing.length,
    completed: accepted.filter((a) => b.watcher.ended.get(a.id)?.type === 'agent_completed').length,
    drainSeconds: (flight.lastEnd - t0) / 1000,
    timedOut: missing.length > 0,
    sse,
    statusSweep: await statusSweep(api, accepted),
    mem,
  };
  api.agent.destroy();
  return result;
}
