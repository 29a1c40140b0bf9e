/**
 * End-to-end throughput, latency and memory of the embedded dev server, driven by
 * the official TypeScript SDK (client + worker in this process, server in its own).
 *
 *   npm run bench:devserver -- [--workflows N] [--concurrency 1,100] [--modes memory,file]
 *                              [--flat N] [--flat-step N] [--warmup N] [--time-limit S]
 *                              [--server-node-flags "..."] [--server-bin PATH] [--json FILE]
 *                              [--worker-compression gzip|none] [--worker-pollers N]
 *
 * Environment equivalents: BENCH_WORKFLOWS, BENCH_CONCURRENCY, BENCH_MODES,
 * BENCH_FLAT_WORKFLOWS, BENCH_FLAT_STEP, BENCH_WARMUP, BENCH_TIME_LIMIT_S,
 * BENCH_SERVER_NODE_FLAGS, BENCH_SERVER_BIN. Flags win over the environment.
 *
 * The worker runs with the SDK's defaults (gzip-compressed requests, 10 pollers per
 * task kind), as an application would; --worker-compression none and
 * --worker-pollers N change that, to tell server cost from SDK defaults.
 *
 * Each case gets a fresh server (bin/temporal-dev on a free port), so peak RSS
 * (VmHWM) belongs to that case alone. Every workflow runs one trivial activity;
 * latency is client start call -> result. The memory-flatness run drives
 * --flat workflows at concurrency 100 with persistence and samples the server's
 * RSS and its heap after a forced GC every --flat-step workflows.
 *
 * Profiling the server: --server-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof"
 * (the profile is written when the server exits at the end of each case).
 * --server-bin runs another checkout's launcher (e.g. a `git archive` snapshot of a
 * commit), so a baseline can be measured while the work tree is mid-change.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { BenchActivities } from './bench-devserver-workflows';

const REPO_ROOT = path.resolve(__dirname, '..');
const DEFAULT_SERVER_BIN = path.join(REPO_ROOT, 'bin', 'temporal-dev');
const WORKFLOWS_PATH = path.join(__dirname, 'bench-devserver-workflows.ts');
/** Stop issuing new workflows this long before the hard limit, so the summary still prints. */
const SOFT_LIMIT_MARGIN_MS = 60_000;
const SERVER_READY_MS = 60_000;
const SERVER_EXIT_GRACE_MS = 20_000;
/** A case with this many failed workflows is abandoned: the numbers would mean nothing. */
const MAX_ERRORS = 20;

// ---- options ----------------------------------------------------------------

interface Options {
  workflows: number;
  concurrency: number[];
  modes: Mode[];
  flatWorkflows: number;
  flatStep: number;
  flatConcurrency: number;
  warmup: number;
  timeLimitS: number;
  serverNodeFlags: string[];
  serverBin: string;
  workerCompression: 'gzip' | 'none';
  workerPollers?: number;
  jsonOut?: string;
}

type Mode = 'memory' | 'file';

const USAGE = `usage: npm run bench:devserver -- [--workflows N] [--concurrency 1,100] [--modes memory,file|none]
       [--flat N (0 skips)] [--flat-step N] [--flat-concurrency N] [--warmup N] [--time-limit S]
       [--server-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof"] [--server-bin PATH] [--json FILE]
       [--worker-compression gzip|none] [--worker-pollers N]`;

function parseOptions(argv: string[]): Options {
  const env = process.env;
  const raw: Record<string, string | undefined> = {
    workflows: env.BENCH_WORKFLOWS,
    concurrency: env.BENCH_CONCURRENCY,
    modes: env.BENCH_MODES,
    flat: env.BENCH_FLAT_WORKFLOWS,
    'flat-step': env.BENCH_FLAT_STEP,
    'flat-concurrency': env.BENCH_FLAT_CONCURRENCY,
    warmup: env.BENCH_WARMUP,
    'time-limit': env.BENCH_TIME_LIMIT_S,
    'server-node-flags': env.BENCH_SERVER_NODE_FLAGS,
    'server-bin': env.BENCH_SERVER_BIN,
    'worker-compression': undefined,
    'worker-pollers': undefined,
    json: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1] in raw)) throw new Error(`unknown argument ${arg}\n${USAGE}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`${arg} needs a value`);
    raw[m[1]] = value;
  }
  const int = (name: string, fallback: number, min: number): number => {
    const v = raw[name] === undefined ? fallback : Number(raw[name]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer >= ${min}`);
    return v;
  };
  const concurrency = (raw.concurrency ?? '1,100').split(',').map((s) => Number(s.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1)) throw new Error('--concurrency must be a list of integers >= 1');
  const compression = raw['worker-compression'] ?? 'gzip';
  if (compression !== 'gzip' && compression !== 'none') throw new Error('--worker-compression must be gzip or none');
  // "none" skips the throughput cases (just the flatness run).
  const modes = raw.modes === 'none' ? [] : (raw.modes ?? 'memory,file').split(',').map((s) => s.trim());
  for (const m of modes) if (m !== 'memory' && m !== 'file') throw new Error(`unknown mode ${m} (memory, file)`);
  return {
    workflows: int('workflows', 2000, 1),
    concurrency,
    modes: modes as Mode[],
    flatWorkflows: int('flat', 10_000, 0),
    flatStep: int('flat-step', 1000, 1),
    flatConcurrency: int('flat-concurrency', 100, 1),
    warmup: int('warmup', 100, 0),
    timeLimitS: int('time-limit', 1800, 30),
    serverNodeFlags: (raw['server-node-flags'] ?? '').split(/\s+/).filter(Boolean),
    serverBin: path.resolve(raw['server-bin'] ?? DEFAULT_SERVER_BIN),
    workerCompression: compression,
    workerPollers: raw['worker-pollers'] === undefined ? undefined : int('worker-pollers', 10, 1),
    jsonOut: raw.json,
  };
}

// ---- the server process ---------------------------------------------------------

/**
 * Preloaded into the server (node -r) so the bench can ask, over the IPC channel,
 * for heap use after a full GC and for event-loop utilisation (how saturated the
 * server's one JS thread is); bin/temporal-dev itself stays untouched. It also
 * stops the server if the bench dies without cleaning up (the channel closes).
 */
const SERVER_PROBE = `'use strict';
const { performance } = require('node:perf_hooks');
process.on('message', (m) => {
  if (!m || typeof m.id !== 'number') return;
  if (m.type === 'heap') {
    if (typeof global.gc === 'function') global.gc();
    const u = process.memoryUsage();
    process.send({ id: m.id, heapUsed: u.heapUsed, external: u.external, arrayBuffers: u.arrayBuffers });
  } else if (m.type === 'elu') {
    const e = performance.eventLoopUtilization();
    process.send({ id: m.id, active: e.active, idle: e.idle });
  }
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
`;

/** How to launch the server: the launcher script, extra node flags, the heap probe to preload. */
interface ServerSpec {
  bin: string;
  nodeFlags: string[];
  probePath: string;
}

interface HeapReport {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** Cumulative event-loop active and idle milliseconds (performance.eventLoopUtilization()). */
interface EluReading {
  active: number;
  idle: number;
}

function utilisation(from: EluReading, to: EluReading): number {
  const active = to.active - from.active;
  const idle = to.idle - from.idle;
  return active / (active + idle);
}

class ServerProcess {
  private readonly output: string[] = [];
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  private probeRequests = new Map<number, (r: Record<string, number> | undefined) => void>();
  private nextProbeId = 1;

  private constructor(
    readonly child: ChildProcess,
    readonly address: string,
    readonly dbFile: string | undefined,
  ) {
    const keep = (chunk: Buffer) => {
      // Keep only the tail: enough to explain a crash, bounded however chatty the server is.
      this.output.push(chunk.toString());
      if (this.output.length > 50) this.output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('message', (m: { id?: number } & Record<string, number>) => {
      if (m?.id === undefined) return;
      this.probeRequests.get(m.id)?.(m);
      this.probeRequests.delete(m.id);
    });
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        this.exitCode = code;
        for (const pending of this.probeRequests.values()) pending(undefined);
        this.probeRequests.clear();
        resolve(code);
      }),
    );
  }

  static async start(spec: ServerSpec, dbFile: string | undefined): Promise<ServerProcess> {
    const port = await freePort();
    const args = [
      ...spec.nodeFlags,
      '--expose-gc',
      '-r',
      spec.probePath,
      spec.bin,
      'server',
      'start-dev',
      '--port',
      String(port),
      '--headless',
      '--log-level',
      'warn',
      ...(dbFile ? ['--db-filename', dbFile] : []),
    ];
    const child = spawn(process.execPath, args, { cwd: path.dirname(path.dirname(spec.bin)), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    liveServers.add(child);
    child.on('exit', () => liveServers.delete(child));
    const server = new ServerProcess(child, `127.0.0.1:${port}`, dbFile);
    await server.waitReady();
    return server;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get tail(): string {
    return this.output.join('').split('\n').slice(-20).join('\n');
  }

  private async waitReady(): Promise<void> {
    const until = Date.now() + SERVER_READY_MS;
    for (;;) {
      if (this.exitCode !== undefined) throw new Error(`server exited with ${this.exitCode} during start:\n${this.tail}`);
      const [host, port] = this.address.split(':');
      if (await canConnect(host, Number(port))) return;
      if (Date.now() > until) throw new Error(`server not listening on ${this.address} after ${SERVER_READY_MS} ms:\n${this.tail}`);
      await sleep(100);
    }
  }

  /** VmRSS and VmHWM (peak RSS) in bytes, straight from the kernel. */
  memory(): { rss: number; hwm: number } {
    try {
      const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
    } catch {
      return { rss: NaN, hwm: NaN };
    }
  }

  /** User + system CPU seconds the server has used so far. */
  cpuSeconds(): number {
    try {
      // Fields after the parenthesised command name; utime and stime are the 12th and 13th of those.
      const stat = fs.readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(rest[11]) + Number(rest[12])) / CLOCK_TICKS;
    } catch {
      return NaN;
    }
  }

  private probe(type: 'heap' | 'elu'): Promise<Record<string, number> | undefined> {
    if (this.exitCode !== undefined || !this.child.connected) return Promise.resolve(undefined);
    const id = this.nextProbeId++;
    return new Promise((resolve) => {
      this.probeRequests.set(id, resolve);
      this.child.send({ type, id });
    });
  }

  /** Heap after a full GC in the server (forcing the GC briefly pauses it). */
  async heap(): Promise<HeapReport> {
    const r = await this.probe('heap');
    return { heapUsed: r?.heapUsed ?? NaN, external: r?.external ?? NaN, arrayBuffers: r?.arrayBuffers ?? NaN };
  }

  async elu(): Promise<EluReading> {
    const r = await this.probe('elu');
    return { active: r?.active ?? NaN, idle: r?.idle ?? NaN };
  }

  dbBytes(): number {
    if (!this.dbFile) return NaN;
    try {
      return fs.statSync(this.dbFile).size;
    } catch {
      return NaN;
    }
  }

  /** SIGTERM (the server flushes and exits; --cpu-prof writes its profile then), SIGKILL if it hangs. */
  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), SERVER_EXIT_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Kernel clock ticks per second for /proc/<pid>/stat; 100 on every Linux we run on. */
const CLOCK_TICKS = 100;

/**
 * Busy CPU seconds of the whole machine. Minus what the server and the bench used,
 * it shows how much other work (other test runs) competed with the case.
 */
function machineBusySeconds(): number {
  try {
    const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

const liveServers = new Set<ChildProcess>();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(1000, () => done(false));
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- driving workflows ------------------------------------------------------------

const activities: BenchActivities = {
  async benchEcho(n: number): Promise<number> {
    return n;
  },
};

interface Session {
  server: ServerProcess;
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  worker: Worker;
  workerRun: Promise<void>;
  taskQueue: string;
}

async function openSession(ctx: BenchContext, dbFile: string | undefined): Promise<Session> {
  const server = await ServerProcess.start(ctx.server, dbFile);
  try {
    const connection = await Connection.connect({ address: server.address });
    const nativeConnection = await NativeConnection.connect({ address: server.address, grpcCompression: { codec: ctx.opts.workerCompression } });
    const taskQueue = `bench-${process.pid}-${Date.now()}`;
    const pollers = ctx.opts.workerPollers;
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle: ctx.bundle,
      activities,
      ...(pollers
        ? { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: pollers }, activityTaskPollerBehavior: { type: 'simple-maximum', maximum: pollers } }
        : {}),
    });
    const workerRun = worker.run();
    // A worker that dies mid-run would otherwise only show up as hung workflows.
    workerRun.catch((err: unknown) => console.error(`worker failed: ${String(err)}`));
    return { server, client: new Client({ connection, namespace: 'default' }), connection, nativeConnection, worker, workerRun, taskQueue };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

async function closeSession(s: Session): Promise<void> {
  // Worker first: its long polls would otherwise hold the server's graceful shutdown open.
  if (s.worker.getState() === 'RUNNING') s.worker.shutdown();
  await s.workerRun.catch(() => undefined);
  await s.nativeConnection.close().catch(() => undefined);
  await s.connection.close().catch(() => undefined);
  await s.server.stop();
}

interface DriveResult {
  completed: number;
  errors: number;
  firstError?: string;
  seconds: number;
  latenciesMs: number[];
  cutShort: boolean;
}

/**
 * Runs `total` workflows with `concurrency` in flight; onCompleted sees the running
 * completion count (used for the memory checkpoints).
 */
async function drive(
  s: Session,
  tag: string,
  total: number,
  concurrency: number,
  softDeadline: number,
  onCompleted?: (completed: number) => void,
): Promise<DriveResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  let cutShort = false;
  const started = performance.now();
  const loop = async (): Promise<void> => {
    while (next < total && errors < MAX_ERRORS) {
      if (Date.now() > softDeadline) {
        cutShort = true;
        return;
      }
      const i = next++;
      const t0 = performance.now();
      try {
        const result = await s.client.workflow.execute('benchOneActivity', { taskQueue: s.taskQueue, workflowId: `${tag}-${i}`, args: [i] });
        if (result !== i) throw new Error(`workflow ${i} returned ${String(result)}`);
        latenciesMs.push(performance.now() - t0);
        completed++;
        onCompleted?.(completed);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, loop));
  return { completed, errors, firstError, seconds: (performance.now() - started) / 1000, latenciesMs, cutShort };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

// ---- cases ------------------------------------------------------------------------

interface CaseResult {
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

interface FlatSample {
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

async function runCase(ctx: BenchContext, mode: Mode, concurrency: number): Promise<CaseResult> {
  const dbFile = mode === 'file' ? path.join(ctx.tmpDir, `case-${mode}-${concurrency}.db`) : undefined;
  const s = await openSession(ctx, dbFile);
  try {
    const rssStart = s.server.memory().rss;
    // Warm-up: JIT in both processes and the worker's sticky cache, kept out of the numbers.
    if (ctx.opts.warmup > 0) {
      const w = await drive(s, `warm-${mode}-${concurrency}`, ctx.opts.warmup, concurrency, ctx.softDeadline);
      if (w.errors > 0) throw new Error(`warm-up failed: ${w.firstError}\n${s.server.tail}`);
    }
    const cpu0 = s.server.cpuSeconds();
    const benchCpu0 = process.cpuUsage();
    const machine0 = machineBusySeconds();
    const serverElu0 = await s.server.elu();
    const benchElu0 = performance.eventLoopUtilization();
    const r = await drive(s, `bench-${mode}-${concurrency}`, ctx.opts.workflows, concurrency, ctx.softDeadline);
    const serverCpu = s.server.cpuSeconds() - cpu0;
    const benchCpu = process.cpuUsage(benchCpu0);
    const otherCpu = machineBusySeconds() - machine0 - serverCpu - (benchCpu.user + benchCpu.system) / 1e6;
    const serverElu = utilisation(serverElu0, await s.server.elu());
    const benchElu = performance.eventLoopUtilization(benchElu0).utilization;
    const mem = s.server.memory();
    const heap = await s.server.heap();
    const sorted = [...r.latenciesMs].sort((a, b) => a - b);
    const notes: string[] = [];
    if (r.cutShort) notes.push('cut at time limit');
    if (r.errors > 0) notes.push(`${r.errors} failed: ${r.firstError}`);
    return {
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

function failedCase(mode: Mode, concurrency: number, workflows: number, err: unknown): CaseResult {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  return {
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

async function runFlat(ctx: BenchContext): Promise<{ samples: FlatSample[]; result: DriveResult }> {
  const { flatWorkflows: total, flatStep: step, flatConcurrency: concurrency } = ctx.opts;
  const dbFile = path.join(ctx.tmpDir, 'flat.db');
  const s = await openSession(ctx, dbFile);
  try {
    const heap0 = await s.server.heap();
    const mem0 = s.server.memory();
    const samples: FlatSample[] = [
      { completed: 0, seconds: 0, segmentPerSecond: NaN, rssMiB: mem0.rss / MiB, peakRssMiB: mem0.hwm / MiB, heapMiB: heap0.heapUsed / MiB, externalMiB: heap0.external / MiB, dbMiB: s.server.dbBytes() / MiB },
    ];
    const pending: Promise<void>[] = [];
    const started = performance.now();
    let lastAt = started;
    let lastCount = 0;
    console.log(`\nmemory flatness: ${total} workflows, concurrency ${concurrency}, persistence on (server pid ${s.server.pid})`);
    console.log('  (heap = server heapUsed right after a forced full GC; RSS read from /proc before that GC)');
    const header = ['done', 'elapsed s', 'wf/s (last step)', 'RSS MiB', 'peak RSS MiB', 'heap MiB', 'external MiB', 'db MiB'];
    printRow(header, FLAT_WIDTHS);
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

/** Least-squares slope of y over x; how much a figure grows per unit of x. */
function slope(points: Array<[number, number]>): number {
  const pts = points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (pts.length < 2) return NaN;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of pts) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

// ---- output -----------------------------------------------------------------------

const FLAT_WIDTHS = [7, 10, 17, 9, 13, 9, 13, 8];

function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

function formatFlat(s: FlatSample): string[] {
  return [String(s.completed), fmt(s.seconds), fmt(s.segmentPerSecond, 0), fmt(s.rssMiB), fmt(s.peakRssMiB), fmt(s.heapMiB), fmt(s.externalMiB), fmt(s.dbMiB, 2)];
}

function printRow(cells: string[], widths: number[]): void {
  console.log('  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  rows.forEach((r, i) => {
    printRow(r, widths);
    if (i === 0) console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  });
}

function printCases(results: CaseResult[]): void {
  const header = ['persistence', 'conc', 'done', 'wf/s', 'p50 ms', 'p99 ms', 'max ms', 'RSS start MiB', 'RSS end MiB', 'peak RSS MiB', 'heap after GC MiB', 'server CPU ms/wf', 'bench CPU ms/wf', 'cores server/bench/other', 'ELU server/bench', 'db MiB', 'note'];
  const rows = results.map((r) => [
    r.mode === 'file' ? 'file (fsync)' : 'memory',
    String(r.concurrency),
    `${r.completed}/${r.workflows}`,
    fmt(r.perSecond, 0),
    fmt(r.p50Ms),
    fmt(r.p99Ms),
    fmt(r.maxMs),
    fmt(r.rssStartMiB),
    fmt(r.rssEndMiB),
    fmt(r.peakRssMiB),
    fmt(r.heapAfterGcMiB),
    fmt(r.serverCpuMsPerWf, 2),
    fmt(r.benchCpuMsPerWf, 2),
    `${fmt(r.serverCores, 2)}/${fmt(r.benchCores, 2)}/${fmt(r.otherCores, 2)}`,
    `${fmt(r.serverElu, 2)}/${fmt(r.benchElu, 2)}`,
    r.mode === 'file' ? fmt(r.dbMiB, 2) : '-',
    r.note,
  ]);
  printTable([header, ...rows]);
  console.log('  cores = average CPU cores busy during the case (server process; bench = client + worker; other = rest of the machine).');
  console.log('  ELU = event-loop utilisation of the server JS thread / the bench main thread (near 1 = that thread is the bottleneck).');
}

function printFlatSummary(samples: FlatSample[], step: number): void {
  // From the second checkpoint on: the first step still includes JIT and cache warm-up.
  const steady = samples.filter((s) => s.completed >= 2 * step);
  const per1000 = (pick: (s: FlatSample) => number) => slope(steady.map((s) => [s.completed / 1000, pick(s)])) ;
  const rssGrowth = per1000((s) => s.rssMiB);
  const heapGrowth = per1000((s) => s.heapMiB);
  const externalGrowth = per1000((s) => s.externalMiB);
  const rates = steady.map((s) => s.segmentPerSecond).filter(Number.isFinite);
  console.log(`  growth per 1,000 workflows (least squares over checkpoints >= ${2 * step}): RSS ${fmt(rssGrowth, 2)} MiB, heap ${fmt(heapGrowth, 2)} MiB, external ${fmt(externalGrowth, 2)} MiB`);
  if (rates.length > 1) console.log(`  throughput per step: first ${fmt(rates[0], 0)} wf/s, last ${fmt(rates[rates.length - 1], 0)} wf/s`);
  // "Flat" = retained heap grows by less than 1 MiB per 1,000 workflows once warm.
  const flat = Number.isFinite(heapGrowth) && heapGrowth < 1;
  console.log(`  verdict: memory ${flat ? 'FLAT' : 'GROWS'} (target: heap growth < 1 MiB per 1,000 workflows)`);
}

// ---- main -------------------------------------------------------------------------

interface BenchContext {
  opts: Options;
  tmpDir: string;
  server: ServerSpec;
  bundle: WorkflowBundleWithSourceMap;
  softDeadline: number;
}

let tmpDirToRemove: string | undefined;

async function cleanup(): Promise<void> {
  const exits = [...liveServers].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, SERVER_EXIT_GRACE_MS).unref();
      }),
  );
  await Promise.all(exits);
  if (tmpDirToRemove) fs.rmSync(tmpDirToRemove, { recursive: true, force: true });
  tmpDirToRemove = undefined;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const startedAt = Date.now();
  const hardDeadline = startedAt + opts.timeLimitS * 1000;
  const softDeadline = hardDeadline - Math.min(SOFT_LIMIT_MARGIN_MS, (opts.timeLimitS * 1000) / 4);
  // The hard stop: whatever hangs (server, worker, SDK), the bench ends and cleans up.
  const watchdog = setTimeout(() => {
    console.error(`\ntime limit of ${opts.timeLimitS} s reached; stopping`);
    void cleanup().finally(() => process.exit(2));
  }, opts.timeLimitS * 1000);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-devserver-'));
  tmpDirToRemove = tmpDir;
  const probePath = path.join(tmpDir, 'heap-probe.cjs');
  fs.writeFileSync(probePath, SERVER_PROBE);

  console.log(
    `bench:devserver  workflows/case ${opts.workflows} (+${opts.warmup} warm-up)  concurrency ${opts.concurrency.join(',')}  ` +
      `persistence ${opts.modes.join(',')}  flatness run ${opts.flatWorkflows}  time limit ${opts.timeLimitS} s`,
  );
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}; server ${opts.serverBin}, node flags: ${opts.serverNodeFlags.join(' ') || '(none)'}`);
  console.log(`worker: request compression ${opts.workerCompression}, pollers per task kind ${opts.workerPollers ?? 'SDK default (10)'}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('ERROR') });
  const ctx: BenchContext = { opts, tmpDir, server: { bin: opts.serverBin, nodeFlags: opts.serverNodeFlags, probePath }, bundle, softDeadline };

  const results: CaseResult[] = [];
  for (const mode of opts.modes) {
    for (const concurrency of opts.concurrency) {
      if (Date.now() > softDeadline) break;
      process.stdout.write(`  running ${mode} x concurrency ${concurrency} ... `);
      try {
        const r = await runCase(ctx, mode, concurrency);
        console.log(`${fmt(r.perSecond, 0)} wf/s`);
        results.push(r);
      } catch (err) {
        // One broken case (say, a server that will not start) should not hide the others' numbers.
        console.log('FAILED');
        console.error(err instanceof Error ? err.message : err);
        results.push(failedCase(mode, concurrency, opts.workflows, err));
        process.exitCode = 1;
      }
    }
  }
  if (results.length > 0) {
    console.log(`\nthroughput and latency (${opts.workflows} workflows of one activity each; latency = client start call -> result)`);
    printCases(results);
  }

  let flat: { samples: FlatSample[]; result: DriveResult } | undefined;
  if (opts.flatWorkflows > 0 && Date.now() < softDeadline) {
    try {
      flat = await runFlat(ctx);
      printFlatSummary(flat.samples, opts.flatStep);
    } catch (err) {
      console.error(`memory flatness run failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    }
  }

  const filePersisted = results.find((r) => r.mode === 'file' && r.concurrency === 100);
  if (filePersisted) {
    const ok = filePersisted.perSecond >= 150;
    console.log(`\ntarget >= 150 wf/s with persistence at concurrency 100: ${fmt(filePersisted.perSecond, 0)} wf/s -> ${ok ? 'MET' : 'NOT MET'}`);
  }
  if (opts.jsonOut) fs.writeFileSync(opts.jsonOut, JSON.stringify({ options: opts, results, flat: flat?.samples }, null, 2));
  clearTimeout(watchdog);
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanup();
    // The SDK's native runtime can keep handles open after its last worker; the bench is done.
    process.exit(process.exitCode ?? 0);
  });
