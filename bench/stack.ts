// One run of the bench against the service's stack: its environment, the
// stack it starts (the ENGINE's Temporal, embedded by default; a private
// redis-server; worker; gateway) with the scripted model in this process, the
// processes beside it (the measuring client, the baseline server, the floor
// worker), the helpers every phase times its rows with, and the guards that
// stop everything it started however the run ends.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import Redis from 'ioredis';
import { ChildLogs } from '../src/dev/launcher/child-logs';
import { startStack, type Stack } from '../src/dev/launcher/stack';
import { startScriptedModel, type ScriptedModel } from '../src/dev/scripted-model';
import { TS_LOADER } from '../src/common/ts-loader';
import { startFloor, type Floor } from './dag';
import { loadKey } from './load';
import type { BenchOptions } from './main';
import {
  closedLoop,
  CpuMeter,
  fmtMs,
  monotonicUs,
  processBusyS,
  PROFILE_ENV,
  request,
  summarize,
  target,
  waitQuiet,
  type CpuMark,
} from './measure';
import { RELAY_TOKEN, RelayWatcher, type BareRelay } from './relay';
import { CLIENT_WARMUP, type Report, type Row } from './report';
import { spawnEntry, startBenchClient, stopChild, waitForPort, type BenchClient, type ClientJob } from './servers';
import { ToolCallClock } from './tools';

const API_KEY = 'bench-key-0123456789';
/** The baseline server's status document. */
export const BASELINE_KEY = 'aes:bench:baseline';
type Busy = Record<string, number>;

// ---- the stack's environment and the run's guards -------------------------------------

/**
 * The stack's environment: this machine's own, minus what would point the
 * stack elsewhere, plus `apiKeys` (`key:account` pairs) and the scripted model
 * at `modelUrl`. An OPENAI_API_KEY stops the stack from starting its own
 * scripted model, so the worker talks to the bench's (the one with the hook).
 * ENGINE is kept: it picks the stack's engine (embedded unless it says otherwise).
 * With `profileDir`, the stack's processes preload the profiler (measure.ts);
 * `restore` takes this process's profiling settings back out once the stack is up.
 */
export function stackEnv(profileDir: string | undefined, apiKeys: string[], modelUrl: string) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['TEMPORAL_ADDRESS', 'REDIS_URL', 'OPENAI_BASE_URL', 'PORT', 'DATA_DIR', 'NODE_OPTIONS'])
    delete env[k];
  Object.assign(env, {
    API_KEYS: apiKeys.join(','),
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'bench-scripted-model',
    OPENAI_BASE_URL: modelUrl,
    MODEL_FLASH: 'scripted-flash',
    MODEL_BASE: 'scripted-base',
    MODEL_MAX: 'scripted-max',
    // The MCP phase's server is on loopback, which the outbound policy refuses unless allowlisted.
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    // The bench does not use the stack's demo MCP server (nor its fixed port 8790).
    DEMO_MCP: 'false',
    // Nor its demo web site (the web phase serves its own page).
    DEMO_WEB: 'false',
  });
  if (!profileDir) return { env, restore: () => undefined };
  const dir = path.resolve(profileDir);
  fs.mkdirSync(dir, { recursive: true });
  const saved = process.env.NODE_OPTIONS;
  // Node refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the same profiler.
  env.NODE_OPTIONS = `--require ${TS_LOADER} --require ${path.join(__dirname, 'measure.ts')}`;
  env[PROFILE_ENV] = dir;
  // The engine is spawned with this process's environment, not the stack's env.
  process.env.NODE_OPTIONS = env.NODE_OPTIONS;
  process.env[PROFILE_ENV] = dir;
  const restore = () => {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
    delete process.env[PROFILE_ENV];
  };
  return { env, profileDir: dir, restore };
}

/**
 * SIGINT/SIGTERM and a hard stop 90 s past the time limit (a wedged phase must
 * not keep the run and its children alive) run cleanup and exit; an exit
 * without cleanup kills the children, so no orphans are left.
 */
function guardRun(b: Bench): void {
  process.on('exit', () => {
    for (const c of b.children()) if (c?.pid && c.exitCode === null) safeKill(c.pid);
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      b.log(`${sig}: stopping the stack`);
      void b.cleanup().finally(() => process.exit(130));
    });
  }
  const hardStop = setTimeout(
    () => {
      b.log('hard time limit reached: stopping everything');
      void b.cleanup().finally(() => process.exit(2));
    },
    (b.opts.timeLimitS + 90) * 1000,
  );
  hardStop.unref();
}

function safeKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// ---- the run --------------------------------------------------------------------------

/** One run of the bench: what it started, what it measured, and the helpers every phase times with. */
export class Bench {
  readonly apiKey = API_KEY;
  readonly rows: Row[] = [];
  readonly taskCosts: Report['taskCosts'] = [];
  readonly bursts: Report['bursts'] = [];
  readonly relaySplits: Report['relaySplits'] = [];
  /** Token emission times, keyed by the token text (see RELAY_TOKEN). */
  readonly emittedAt = new Map<string, number>();
  readonly mcpClock = new ToolCallClock();
  readonly cpu = new CpuMeter(() => [process.pid, this.client?.pid, ...this.children().map((c) => c?.pid)]);
  model!: ScriptedModel;
  stack!: Stack;
  watcher!: RelayWatcher;
  redis!: Redis;
  client!: BenchClient;
  env!: NodeJS.ProcessEnv;
  profileDir?: string;
  baseline?: ChildProcess;
  baselinePort!: Promise<number>;
  bare?: BareRelay;
  private floorWorker?: Promise<Floor>;
  private floorChild?: ChildProcess;
  private temporalClient?: Promise<Client>;
  private readonly dataDir?: string;
  private readonly t0 = performance.now();
  private cleaning?: Promise<void>;

  constructor(readonly opts: BenchOptions) {
    // Removed by cleanup(); only the bench's own temporary folder.
    this.dataDir = opts.persist ? fs.mkdtempSync(path.join(os.tmpdir(), 'aes-bench-')) : undefined;
    // From here on, however the process ends, what the run started is stopped.
    guardRun(this);
  }

  get gatewayUrl(): string {
    return this.stack.gatewayUrl;
  }
  get maxClients(): number {
    return this.opts.concurrency[this.opts.concurrency.length - 1];
  }
  readonly log = (s: string) => console.log(`[bench +${((performance.now() - this.t0) / 1000).toFixed(1)}s] ${s}`);
  readonly left = () => this.t0 + this.opts.timeLimitS * 1000 - performance.now();

  /** The scripted model (here), the stack, the watcher, the measuring client and the baseline server. */
  async start(): Promise<void> {
    this.model = await startScriptedModel({ port: 0, onTokenWritten: (delta) => this.onToken(delta) });
    const load = Array.from({ length: this.opts.loadAccounts }, (_, i) => `${loadKey(i)}:load${i}`);
    const { env, profileDir, restore } = stackEnv(this.opts.profileDir, [`${API_KEY}:bench`, ...load], this.model.url);
    [this.env, this.profileDir] = [env, profileDir];
    const profiling = profileDir ? `, profiling into ${profileDir}` : '';
    this.log(`starting the stack (${os.cpus().length} cores, Node ${process.version})${profiling}`);
    const childLogs = this.opts.echoChildren ? new ChildLogs({ show: this.log }) : undefined;
    // The worker serves its metrics (through the gateway's /metrics): phases read its pauses.
    const ports = { gatewayPort: 0, temporalPort: 0, demoMcpPort: 0, demoWebPort: 0, workerMetricsPort: 0 };
    this.stack = await startStack({ ...ports, env, log: this.log, childLogs, dataDir: this.dataDir });
    restore();
    const p = this.pids();
    this.log(
      `stack up: ${this.stack.engine ?? 'external'} engine, gateway ${this.gatewayUrl} (pid ${p.gateway}), worker pid ${p.worker}, engine pid ${p.engine}, redis pid ${p.redis}`,
    );
    this.redis = new Redis(this.stack.redisUrl, { connectionName: 'bench' });
    this.watcher = new RelayWatcher(this.stack.redisUrl);
    await this.watcher.start();
    this.client = startBenchClient(env);
    // Unmeasured: the client process's own HTTP code gets optimised before any phase times it.
    await this.client.warm(this.gatewayUrl, CLIENT_WARMUP);
    this.baseline = spawnEntry('servers.ts', ['baseline', this.stack.redisUrl, BASELINE_KEY], env);
    this.baselinePort = waitForPort(this.baseline);
    this.baselinePort.catch(() => undefined); // reported when a phase awaits it
  }

  private onToken(delta: Record<string, unknown>): void {
    this.mcpClock.onDelta(delta);
    const k = typeof delta.content === 'string' ? delta.content.trim() : '';
    if (RELAY_TOKEN.test(k)) this.emittedAt.set(k, performance.now());
  }

  /** The floor worker on the stack's engine, started on first use. */
  floor(): Promise<Floor> {
    this.floorWorker ??= startFloor(this.stack.env).then((f) => ((this.floorChild = f.child), f));
    return this.floorWorker;
  }

  /** A Temporal client of the stack's engine (histories, describes), connected on first use. */
  temporal(): Promise<Client> {
    this.temporalClient ??= Connection.connect({ address: this.stack.temporalAddress }).then(
      (connection) => new Client({ connection }),
    );
    return this.temporalClient;
  }

  /** One POST / of a phase that runs its tasks one at a time; a failed request answers status 0 with the error. */
  async post(body: unknown, timeoutMs: number, path = '/'): Promise<{ status: number; body: string }> {
    const api = target(this.gatewayUrl, this.apiKey, 1);
    try {
      return await request(api, 'POST', path, body, { timeoutMs });
    } catch (err) {
      return { status: 0, body: err instanceof Error ? err.message : String(err) };
    } finally {
      api.agent.destroy();
    }
  }

  /** The stack's processes now (the isolated phase restarts the worker under a new pid). */
  pids(): Record<string, number | undefined> {
    const c = this.stack.children;
    return {
      gateway: c.gateway?.proc.pid,
      worker: c.worker?.proc.pid,
      engine: c.engine?.proc.pid,
      redis: c.redis?.proc.pid,
    };
  }

  busyByProcess(): Busy {
    const all = { ...this.pids(), baseline: this.baseline?.pid };
    return Object.fromEntries(Object.entries(all).flatMap(([name, pid]) => (pid ? [[name, processBusyS(pid)]] : [])));
  }

  /** CPU ms per unit of work, by process, between two busyByProcess() readings. */
  cpuPer(busy0: Busy, busy1: Busy, n: number): Record<string, number> {
    return Object.fromEntries(Object.keys(busy1).map((k) => [k, ((busy1[k] - (busy0[k] ?? 0)) * 1000) / n]));
  }

  /** Waits for the stack (and the processes beside it) to settle; logs when it did not. */
  async quiet(what = 'the stack'): Promise<void> {
    const q = await waitQuiet(() => [...Object.values(this.pids()), this.baseline?.pid, this.floorChild?.pid]);
    if (!q.quiet)
      this.log(
        `${what} did not settle (${q.cores.toFixed(2)} cores busy after ${(q.waitedMs / 1000).toFixed(1)} s); measuring anyway`,
      );
  }

  /** One latency row from its samples, measured since the CPU mark m0 and monotonic time fromUs. */
  addRow(
    label: string,
    concurrency: number | string,
    lat: number[],
    errors: number,
    m0: CpuMark,
    fromUs: number,
    targetP99?: number,
  ): Row {
    const otherCores = CpuMeter.foreignCores(m0, this.cpu.mark());
    const s = summarize(lat);
    const window = { fromUs, toUs: monotonicUs() };
    const row: Row = { label, concurrency: String(concurrency), s, errors, targetP99, otherCores, window };
    this.rows.push(row);
    this.log(`${label} @${concurrency}: n=${s.count} p50=${fmtMs(s.p50)} ms p99=${fmtMs(s.p99)} ms errors=${errors}`);
    return row;
  }

  /** A closed loop of C clients in this process (SSE rows, which need the model's clock). */
  async measure(
    label: string,
    C: number,
    n: number,
    job: (i: number) => Promise<{ ms: number; ok: boolean }>,
    targetP99?: number,
  ): Promise<Row> {
    const lat: number[] = [];
    let errors = 0;
    const [m0, fromUs] = [this.cpu.mark(), monotonicUs()];
    await closedLoop(n, C, async (i) => {
      if (this.left() <= 0) return;
      const r = await job(i).catch(() => ({ ms: NaN, ok: false }));
      if (r.ok) lat.push(r.ms);
      else errors++;
    });
    return this.addRow(label, C, lat, errors, m0, fromUs, targetP99);
  }

  /** Requests timed by the measuring client, after a quiet stack; the row gets the CPU each request cost, by process. */
  async remote(
    label: string,
    concurrency: number | string,
    job: Partial<ClientJob> & Pick<ClientJob, 'requests'>,
    ok: (status: number) => boolean,
    targetP99?: number,
  ) {
    await this.quiet(`${label} @${concurrency}: the stack`);
    const [m0, fromUs, busy0] = [this.cpu.mark(), monotonicUs(), this.busyByProcess()];
    const result = await this.client.run({ base: this.gatewayUrl, key: API_KEY, concurrency: 1, warmup: [], ...job });
    const busy1 = this.busyByProcess();
    const lat: number[] = [];
    let errors = 0;
    result.ms.forEach((ms, i) => (ok(result.status[i]) && Number.isFinite(ms) ? lat.push(ms) : errors++));
    const row = this.addRow(label, concurrency, lat, errors, m0, fromUs, targetP99);
    if (result.ms.length) row.cpuPerRequest = this.cpuPer(busy0, busy1, result.ms.length);
    return result;
  }

  /**
   * Rows of a phase that runs tasks one at a time and times them itself. This
   * process serves the model (and the MCP server): it does not also follow every event meanwhile.
   */
  async unwatched(phase: (b: Bench) => Promise<Row[]>): Promise<void> {
    await this.watcher.pause();
    const [m0, fromUs] = [this.cpu.mark(), monotonicUs()];
    const rows = await phase(this).finally(() => this.watcher.resume());
    const otherCores = CpuMeter.foreignCores(m0, this.cpu.mark());
    this.rows.push(...rows.map((r) => ({ ...r, otherCores, window: { fromUs, toUs: monotonicUs() } })));
  }

  /** Stops everything the run started (once, however often it is called). */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      this.watcher?.stop();
      this.client?.close();
      this.redis?.disconnect();
      await (await this.temporalClient?.catch(() => undefined))?.connection.close();
      await (await this.floorWorker?.catch(() => undefined))?.stop();
      if (this.baseline) await stopChild(this.baseline);
      await this.bare?.stop();
      await this.stack?.stop();
      await this.model?.close();
      if (this.dataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
    })();
    return this.cleaning;
  }

  /** The processes the run started, but the measuring client (it exits with this process's IPC channel). */
  children(): (ChildProcess | undefined)[] {
    return [
      ...Object.values(this.stack?.children ?? {}).map((c) => c.proc),
      this.baseline,
      this.floorChild,
      ...(this.bare?.children ?? []),
    ];
  }
}
