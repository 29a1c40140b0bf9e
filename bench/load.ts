// The phases that run many tasks. load: many slow background tasks in flight
// at once, a crowd of SSE clients on their event streams, and the peak memory
// of every process of the stack while that lasts. soak: waves of one-turn
// tasks against a service already running (`npm run bench:soak`), each wave's
// throughput and each process's memory after it.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { BenchOptions } from './main';
import {
  anyTasks,
  closedLoop,
  fmtMiB,
  fmtMs,
  HttpTarget,
  openSse,
  readMem,
  request,
  sleep,
  summarize,
  Summary,
  table,
  target,
} from './measure';
import type { RelayWatcher } from './relay';
import type { Bench } from './stack';

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

/** The load phase's part of the report. */
export function loadTable(load: LoadResult, opts: BenchOptions, otherCores = 0): string[] {
  const ok = !load.timedOut && load.completed === load.tasks;
  const facts: [string, string][] = [
    ['tasks accepted (202)', `${load.accepted} / ${load.tasks} (errors ${load.submitErrors})`],
    [
      `submit latency under load (${opts.loadConcurrency} clients)`,
      `p50 ${fmtMs(load.submit.p50)} ms, p99 ${fmtMs(load.submit.p99)} ms`,
    ],
    [
      'submit window',
      `${load.submitSeconds.toFixed(1)} s (${(load.accepted / load.submitSeconds).toFixed(0)} tasks/s)`,
    ],
    ['peak tasks in flight (accepted, not ended)', String(load.peakInFlight)],
    [
      'peak model calls open at once',
      `${load.peakModelCalls} (bounded by ${opts.loadAccounts} accounts x MAX_RUNNING_TASKS_PER_ACCOUNT and the worker's activity slots, SDK default 100)`,
    ],
    ['SSE clients opened / peak open at once', `${load.sse.opened} / ${load.sse.peakOpen} (failed ${load.sse.failed})`],
    [
      'SSE clients that saw agent_completed',
      `${load.sse.completed} / ${load.sse.requested}, ${load.sse.tokens} tokens, ${load.sse.seqGaps} seq gaps`,
    ],
    ['tasks ended (relay) / completed', `${load.ended} / ${load.completed}`],
    [
      'GET /tasks/{id} sweep afterwards',
      Object.entries(load.statusSweep)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
    ],
    ['load start -> last task ended', `${load.drainSeconds.toFixed(1)} s`],
    ['other CPU during the load phase', `${otherCores.toFixed(2)} cores`],
    ['all tasks completed', ok ? 'YES' : 'NO'],
  ];
  const mem = Object.entries(load.mem).map(([name, m]) => [
    name,
    fmtMiB(m.beforeKiB),
    fmtMiB(m.peakSampledKiB),
    fmtMiB(m.hwmKiB),
  ]);
  return [
    '',
    `-- load: ${load.tasks} background tasks over ${opts.loadAccounts} accounts ([[slow delay=${opts.loadDelayMs} tokens=${opts.loadTokens}]], tokens streamed to the relay), ${opts.loadSse} SSE clients --`,
    table([['', 'value'], ...facts], () => false),
    '',
    table([['process', 'RSS before load', 'peak RSS sampled (250 ms)', 'VmHWM (lifetime peak)'], ...mem]),
  ];
}

// ---- soak -----------------------------------------------------------------------------
// Memory that keeps growing from wave to wave, or waves that slow down, are what it is for: faults
// a few minutes of the other phases do not reach (docs/performance.md, "What the soak found").
// Start the service with SESSION_IDLE_CLOSE_MS=5000 to have each task's new session close too;
// with the default (30 min) open sessions are part of the growth by design.

/** The processes reported, by a part of their command line. */
const SOAKED: [label: string, pattern: string][] = [
  ['gateway', 'src/gateway/main.ts'],
  ['worker', 'src/worker/main.ts'],
  ['engine', 'temporal-dev'],
  ['redis', 'redis-server'],
];

/** RSS in MiB summed over the processes whose command line contains `pattern`; undefined when none runs. */
function rssMiB(pattern: string): number | undefined {
  let kib: number | undefined;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && d !== String(process.pid))) {
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // the process ended while we looked
    }
    const { rssKiB } = cmdline.includes(pattern) ? readMem(Number(pid)) : {};
    if (rssKiB !== undefined) kib = (kib ?? 0) + rssKiB;
  }
  return kib === undefined ? undefined : Math.round(kib / 1024);
}

/** Waves of one-turn background tasks on one account, each waited for, then the stack let settle and its RSS read. */
export async function soakPhase(
  o: Pick<BenchOptions, 'url' | 'key' | 'soakWaves' | 'soakTasks' | 'soakClients' | 'soakSettleMs'>,
): Promise<void> {
  const t = target(o.url, o.key, o.soakClients);
  const rssLine = () => SOAKED.map(([label, pattern]) => `${label} ${rssMiB(pattern) ?? '-'}`).join(', ');
  console.log(
    `soak of ${o.url}: ${o.soakWaves} waves of ${o.soakTasks} one-turn background tasks from ${o.soakClients} clients`,
  );
  console.log(`before: RSS MiB ${rssLine()}`);
  try {
    for (let wave = 1; wave <= o.soakWaves; wave++) {
      const started = Date.now();
      await closedLoop(o.soakTasks, o.soakClients, async (n) => {
        const r = await request(t, 'POST', '/', { message: `soak ${wave}-${n}`, background: true });
        if (r.status !== 202) throw new Error(`POST / answered ${r.status}: ${r.body}`);
      });
      const submitted = (Date.now() - started) / 1000;
      // Done when nothing of the account is queued or running (the soak's tasks are the account's only ones).
      while (await anyTasks(t, 'queued', 'running')) await sleep(250);
      const ended = (Date.now() - started) / 1000;
      await sleep(o.soakSettleMs);
      console.log(
        `wave ${wave}: ${o.soakTasks} submitted in ${submitted.toFixed(1)} s, all ended after ${ended.toFixed(1)} s (${(o.soakTasks / ended).toFixed(1)} tasks/s); RSS MiB ${rssLine()}`,
      );
    }
  } finally {
    t.agent.destroy();
  }
}
