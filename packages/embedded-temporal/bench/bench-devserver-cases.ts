// The bench's two kinds of run, each on a fresh server: a throughput/latency case
// (one engine x one persistence mode x one concurrency) and the memory-flatness run.
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  closeSession,
  drive,
  openSession,
  percentile,
  type BenchContext,
  type DriveResult,
} from './bench-devserver-drive';
import type { Engine, Mode } from './bench-devserver-options';
import { FLAT_WIDTHS, formatFlat, printRow } from './bench-devserver-report';
import { machineBusySeconds, utilisation, type ServerSpec } from './bench-devserver-server';

export interface CaseResult {
  engine: Engine;
  mode: Mode;
  concurrency: number;
  workflows: number;
  completed: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  rssStartMiB: number;
  rssEndMiB: number;
  peakRssMiB: number;
  heapAfterGcMiB: number;
  serverCpuMsPerWf: number;
  benchCpuMsPerWf: number;
  /** Average cores busy during the case: the server, the bench (client + worker), everything else. */
  serverCores: number;
  benchCores: number;
  otherCores: number;
  /** Event-loop utilisation of the server's JS thread and of the bench's main thread (1 = saturated). */
  serverElu: number;
  benchElu: number;
  dbMiB: number;
  note: string;
}

export interface FlatSample {
  completed: number;
  seconds: number;
  segmentPerSecond: number;
  rssMiB: number;
  peakRssMiB: number;
  heapMiB: number;
  externalMiB: number;
  dbMiB: number;
}

const MiB = 1024 * 1024;

export async function runCase(
  ctx: BenchContext,
  spec: ServerSpec,
  mode: Mode,
  concurrency: number,
): Promise<CaseResult> {
  const engine = spec.engine;
  const dbFile = mode === 'file' ? path.join(ctx.tmpDir, `case-${engine}-${mode}-${concurrency}.db`) : undefined;
  const s = await openSession(ctx, spec, dbFile);
  try {
    const rssStart = s.server.memory().rss;
    // Warm-up: JIT in both processes and the worker's sticky cache, kept out of the numbers.
    if (ctx.opts.warmup > 0) {
      const w = await drive(s, `warm-${mode}-${concurrency}`, ctx.opts.warmup, concurrency, ctx.softDeadline);
      if (w.errors > 0) throw new Error(`warm-up failed: ${w.firstError}\n${s.server.tail}`);
    }
    const { r, serverCpu, benchCpu, otherCpu, serverElu, benchElu } = await measured(s, () =>
      drive(s, `bench-${mode}-${concurrency}`, ctx.opts.workflows, concurrency, ctx.softDeadline),
    );
    const mem = s.server.memory();
    const heap = await s.server.heap();
    const sorted = [...r.latenciesMs].sort((a, b) => a - b);
    const notes: string[] = [];
    if (r.cutShort) notes.push('cut at time limit');
    if (r.errors > 0) notes.push(`${r.errors} failed: ${r.firstError}`);
    return {
      engine,
      mode,
      concurrency,
      workflows: ctx.opts.workflows,
      completed: r.completed,
      errors: r.errors,
      perSecond: r.completed / r.seconds,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
      rssStartMiB: rssStart / MiB,
      rssEndMiB: mem.rss / MiB,
      peakRssMiB: mem.hwm / MiB,
      heapAfterGcMiB: heap.heapUsed / MiB,
      serverCpuMsPerWf: (serverCpu * 1000) / Math.max(r.completed, 1),
      benchCpuMsPerWf: (benchCpu.user + benchCpu.system) / 1000 / Math.max(r.completed, 1),
      serverCores: serverCpu / r.seconds,
      benchCores: (benchCpu.user + benchCpu.system) / 1e6 / r.seconds,
      otherCores: Math.max(0, otherCpu / r.seconds),
      serverElu,
      benchElu,
      dbMiB: s.server.dbBytes() / MiB,
      note: notes.join('; '),
    };
  } finally {
    await closeSession(s);
  }
}

type Session = Awaited<ReturnType<typeof openSession>>;

/** Runs `run` between two readings of the CPU time and event-loop utilisation of the server, the bench and the machine. */
async function measured(s: Session, run: () => Promise<DriveResult>) {
  const cpu0 = s.server.cpuSeconds();
  const benchCpu0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  const serverElu0 = await s.server.elu();
  const benchElu0 = performance.eventLoopUtilization();
  const r = await run();
  const serverCpu = s.server.cpuSeconds() - cpu0;
  const benchCpu = process.cpuUsage(benchCpu0);
  const otherCpu = machineBusySeconds() - machine0 - serverCpu - (benchCpu.user + benchCpu.system) / 1e6;
  const serverElu = utilisation(serverElu0, await s.server.elu());
  const benchElu = performance.eventLoopUtilization(benchElu0).utilization;
  return { r, serverCpu, benchCpu, otherCpu, serverElu, benchElu };
}

export function failedCase(
  engine: Engine,
  mode: Mode,
  concurrency: number,
  workflows: number,
  err: unknown,
): CaseResult {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return {
    engine,
    mode,
    concurrency,
    workflows,
    completed: 0,
    errors: 0,
    perSecond: NaN,
    p50Ms: NaN,
    p99Ms: NaN,
    maxMs: NaN,
    rssStartMiB: NaN,
    rssEndMiB: NaN,
    peakRssMiB: NaN,
    heapAfterGcMiB: NaN,
    serverCpuMsPerWf: NaN,
    benchCpuMsPerWf: NaN,
    serverCores: NaN,
    benchCores: NaN,
    otherCores: NaN,
    serverElu: NaN,
    benchElu: NaN,
    dbMiB: NaN,
    note: `case failed: ${message}`,
  };
}

export async function runFlat(ctx: BenchContext): Promise<{ samples: FlatSample[]; result: DriveResult }> {
  const { flatWorkflows: total, flatStep: step, flatConcurrency: concurrency } = ctx.opts;
  const dbFile = path.join(ctx.tmpDir, 'flat.db');
  const s = await openSession(ctx, ctx.servers.embedded, dbFile);
  try {
    const samples: FlatSample[] = [await firstSample(s)];
    const pending: Promise<void>[] = [];
    const started = performance.now();
    let lastAt = started;
    let lastCount = 0;
    printFlatHeader(total, concurrency, s.server.pid);
    printRow(formatFlat(samples[0]), FLAT_WIDTHS);
    const result = await drive(s, 'flat', total, concurrency, ctx.softDeadline, (completed) => {
      if (completed % step !== 0 && completed !== total) return;
      const now = performance.now();
      // RSS now (cheap, synchronous); the heap figure arrives once the server has run its GC.
      const mem = s.server.memory();
      const sample: FlatSample = {
        completed,
        seconds: (now - started) / 1000,
        segmentPerSecond: (completed - lastCount) / ((now - lastAt) / 1000),
        rssMiB: mem.rss / MiB,
        peakRssMiB: mem.hwm / MiB,
        heapMiB: NaN,
        externalMiB: NaN,
        dbMiB: s.server.dbBytes() / MiB,
      };
      lastAt = now;
      lastCount = completed;
      samples.push(sample);
      pending.push(
        s.server.heap().then((h) => {
          sample.heapMiB = h.heapUsed / MiB;
          sample.externalMiB = h.external / MiB;
          printRow(formatFlat(sample), FLAT_WIDTHS);
        }),
      );
    });
    await Promise.all(pending);
    if (result.cutShort) console.log(`  cut at the time limit after ${result.completed} workflows`);
    if (result.errors > 0) console.log(`  ${result.errors} workflows failed, first: ${result.firstError}`);
    return { samples, result };
  } finally {
    await closeSession(s);
  }
}

/** The server's figures before the flatness run's first workflow. */
async function firstSample(s: Session): Promise<FlatSample> {
  const heap0 = await s.server.heap();
  const mem0 = s.server.memory();
  return {
    completed: 0,
    seconds: 0,
    segmentPerSecond: NaN,
    rssMiB: mem0.rss / MiB,
    peakRssMiB: mem0.hwm / MiB,
    heapMiB: heap0.heapUsed / MiB,
    externalMiB: heap0.external / MiB,
    dbMiB: s.server.dbBytes() / MiB,
  };
}

function printFlatHeader(total: number, concurrency: number, pid: number): void {
  console.log(`\nmemory flatness: ${total} workflows, concurrency ${concurrency}, persistence on (server pid ${pid})`);
  console.log('  (heap = server heapUsed right after a forced full GC; RSS read from /proc before that GC)');
  const header = [
    'done',
    'elapsed s',
    'wf/s (last step)',
    'RSS MiB',
    'peak RSS MiB',
    'heap MiB',
    'external MiB',
    'db MiB',
  ];
  printRow(header, FLAT_WIDTHS);
}
