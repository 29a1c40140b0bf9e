/**
 * `npm run bench`: latency, relay overhead and memory of the whole service on
 * this machine, against the targets it must meet. `npm run bench -- --help`
 * lists the options; docs/benchmarks.md says what each row means.
 *
 * Starts the real stack (the ENGINE's Temporal, embedded by default; a private
 * redis-server; worker; gateway) with the scripted model in this process, runs
 * the phases, prints one table, stops everything it started. Beside the stack:
 * a measuring client process (bench/client.ts), reference servers
 * (bench/servers.ts) and, for the MCP and DAG phases, a floor worker on the same
 * engine (bench/floor.ts).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { ChildLogs } from '../src/dev/launcher/child-logs';
import { startStack, type Stack } from '../src/dev/launcher/stack';
import { startScriptedModel, type ScriptedModel } from '../src/dev/scripted-model';
import { startBenchClient, type BenchClient, type ClientJob, type ClientResult } from './client';
import { dagPhase } from './dag';
import { startFloor, type Floor } from './floor';
import { loadKey, loadPhase } from './load';
import { closedLoop, cpuProbeMs, fmtMs, monotonicUs, summarize } from './measure';
import { parseOptions, type BenchOptions } from './options';
import { printProfiles } from './profile';
import { runRelayPhase, RELAY_TOKEN, type BareRelay } from './relay';
import { CLIENT_WARMUP, printReport, type Report, type Row } from './report';
import {
  BASELINE_KEY,
  resultPhase,
  statusAndBaseline,
  statusLoadPhase,
  submitPhases,
  TARGETS,
  ttfePhase,
} from './requests';
import {
  CpuMeter,
  guardRun,
  processBusyS,
  RelayWatcher,
  spawnEntry,
  stackEnv,
  stopChild,
  waitForPort,
  waitQuiet,
} from './stack';
import { datastoresPhase, mcpPhase, ToolCallClock } from './tools';

const API_KEY = 'bench-key-0123456789';
type Mark = ReturnType<CpuMeter['mark']>;
type Busy = Record<string, number>;

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
  readonly cpu = new CpuMeter(() => [
    process.pid,
    this.baseline?.pid,
    this.client?.pid,
    this.floorChild?.pid,
    ...(this.bare?.children ?? []).map((c) => c.pid),
    ...Object.values(this.stack?.children ?? {}).map((c) => c.proc.pid),
  ]);
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
  private readonly dataDir?: string;
  private readonly t0 = performance.now();
  private cleaning?: Promise<void>;

  constructor(readonly opts: BenchOptions) {
    // Removed by cleanup(); only the bench's own temporary folder.
    this.dataDir = opts.persist ? fs.mkdtempSync(path.join(os.tmpdir(), 'aes-bench-')) : undefined;
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
    const apiKeys = [
      `${API_KEY}:bench`,
      ...Array.from({ length: this.opts.loadAccounts }, (_, i) => `${loadKey(i)}:load${i}`),
    ];
    const { env, profileDir, restore } = stackEnv(this.opts.profileDir, apiKeys, this.model.url);
    [this.env, this.profileDir] = [env, profileDir];
    this.log(
      `starting the stack (${os.cpus().length} cores, Node ${process.version})${profileDir ? `, profiling into ${profileDir}` : ''}`,
    );
    const childLogs = this.opts.echoChildren ? new ChildLogs({ show: this.log }) : undefined;
    this.stack = await startStack({
      gatewayPort: 0,
      temporalPort: 0,
      demoMcpPort: 0,
      env,
      log: this.log,
      childLogs,
      dataDir: this.dataDir,
    });
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

  /** Waits for the stack (and the floor worker) to settle; logs when it did not. */
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
    m0: Mark,
    fromUs: number,
    targetP99?: number,
  ): Row {
    const row: Row = {
      label,
      concurrency: String(concurrency),
      s: summarize(lat),
      errors,
      targetP99,
      otherCores: CpuMeter.foreignCores(m0, this.cpu.mark()),
      window: { fromUs, toUs: monotonicUs() },
    };
    this.rows.push(row);
    this.log(
      `${label} @${concurrency}: n=${row.s.count} p50=${fmtMs(row.s.p50)} ms p99=${fmtMs(row.s.p99)} ms errors=${errors}`,
    );
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
  ): Promise<ClientResult> {
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
  async unwatched(phase: () => Promise<Row[]>): Promise<void> {
    await this.watcher.pause();
    const [m0, fromUs] = [this.cpu.mark(), monotonicUs()];
    const rows = await phase().finally(() => this.watcher.resume());
    const otherCores = CpuMeter.foreignCores(m0, this.cpu.mark());
    this.rows.push(...rows.map((r) => ({ ...r, otherCores, window: { fromUs, toUs: monotonicUs() } })));
  }

  /** Stops everything the run started (once, however often it is called). */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      this.watcher?.stop();
      this.client?.close();
      this.redis?.disconnect();
      await (await this.floorWorker?.catch(() => undefined))?.stop();
      if (this.baseline) await stopChild(this.baseline);
      await this.bare?.stop();
      await this.stack?.stop();
      await this.model?.close();
      if (this.dataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
    })();
    return this.cleaning;
  }

  children(): (ChildProcess | undefined)[] {
    return [
      ...Object.values(this.stack?.children ?? {}).map((c) => c.proc),
      this.baseline,
      this.floorChild,
      ...(this.bare?.children ?? []),
    ];
  }
}

/** The phases, in the order they run (the submit phase's tasks serve status and result). */
async function runPhases(b: Bench): Promise<Report['load']> {
  const has = (p: string) => b.opts.phases.has(p as never);
  const ids = ['submit', 'isolated', 'status', 'result', 'baseline'].some(has) ? await submitPhases(b) : [];
  if (has('status-load')) await statusLoadPhase(b);
  await statusAndBaseline(b, ids);
  if (has('result') && ids.length) await resultPhase(b, ids);
  if (has('ttfe')) await ttfePhase(b);
  if (has('relay')) {
    const started = (bare: BareRelay) => (b.bare = bare);
    const stackPids = () => Object.values(b.pids());
    const relay = await runRelayPhase({
      opts: b.opts,
      gatewayUrl: b.gatewayUrl,
      apiKey: b.apiKey,
      redisUrl: b.stack.redisUrl,
      modelUrl: b.model.url,
      env: b.env,
      emittedAt: b.emittedAt,
      watcher: b.watcher,
      cpu: b.cpu,
      stackPids,
      left: b.left,
      log: b.log,
      started,
      targetP99: TARGETS.relay,
    });
    b.rows.push(...relay.rows);
    b.relaySplits.push(...relay.splits);
  }
  if (has('mcp')) await b.unwatched(() => mcpPhase(b));
  if (has('dag')) await b.unwatched(() => dagPhase(b));
  if (has('datastores')) await b.unwatched(() => datastoresPhase(b));
  if (!has('load')) return undefined;
  if (b.left() < 30_000) return void b.log('load phase skipped: not enough of the time limit left');
  b.log(
    `load: ${b.opts.loadTasks} background tasks over ${b.opts.loadAccounts} accounts ([[slow delay=${b.opts.loadDelayMs} tokens=${b.opts.loadTokens}]], streamed), ${b.opts.loadSse} SSE clients`,
  );
  return loadPhase(b, { ...b.pids(), 'bench (model + clients)': process.pid });
}

async function main(): Promise<void> {
  const b = new Bench(parseOptions(process.argv.slice(2), process.env));
  guardRun({ timeLimitS: b.opts.timeLimitS, cleanup: () => b.cleanup(), children: () => b.children(), log: b.log });
  const [runMark, loadAvgAtStart, probeStart] = [b.cpu.mark(), os.loadavg(), cpuProbeMs()];
  const whole = { fromUs: 0, toUs: Infinity };
  let load: Report['load'];
  let loadOtherCores: number | undefined;
  try {
    await b.start();
    // Profiles are summarised over the phases only, not the children's start-up.
    whole.fromUs = monotonicUs();
    const m0 = b.cpu.mark();
    load = await runPhases(b);
    if (load) loadOtherCores = CpuMeter.foreignCores(m0, b.cpu.mark());
  } finally {
    whole.toUs = monotonicUs();
    b.log('stopping the stack');
    await b.cleanup();
  }
  const otherCores = { run: CpuMeter.foreignCores(runMark, b.cpu.mark()), load: loadOtherCores };
  const engine = b.stack.engine ?? 'external';
  printReport({
    opts: b.opts,
    engine,
    rows: b.rows,
    taskCosts: b.taskCosts,
    bursts: b.bursts,
    relaySplits: b.relaySplits,
    load,
    otherCores,
    loadAvgAtStart,
    probes: { start: probeStart, end: cpuProbeMs() },
  });
  if (b.profileDir)
    printProfiles(
      b.profileDir,
      { gateway: b.pids().gateway, worker: b.pids().worker, engine: b.pids().engine },
      b.rows,
      whole,
    );
  if (b.opts.jsonOut) {
    fs.writeFileSync(
      b.opts.jsonOut,
      JSON.stringify(
        { options: { ...b.opts, phases: [...b.opts.phases] }, rows: b.rows, relaySplits: b.relaySplits, load },
        null,
        2,
      ),
    );
    b.log(`raw results written to ${b.opts.jsonOut}`);
  }
  const failed = (load && (load.timedOut || load.completed !== load.accepted)) || b.rows.some((r) => r.s.count === 0);
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
