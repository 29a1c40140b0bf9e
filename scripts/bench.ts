/**
 * `npm run bench`: latency, relay overhead and memory of the whole service on
 * this machine, against the targets it must meet.
 *
 * Starts the real stack (embedded Temporal engine, private redis-server, worker,
 * gateway) with the scripted model in this process, runs the phases, prints one
 * table, stops everything it started. `npm run bench -- --help` lists the sizes;
 * the default run takes about four minutes on two cores.
 *
 * Method (also printed under the table):
 * - latency phases are closed loops of --concurrency clients (default 1 and 8,
 *   no think time) over keep-alive connections, timed from the call to the
 *   last body byte; submit also gets an open-loop row at a steady rate. They
 *   are timed by a measuring client in a process of its own
 *   (scripts/bench-client.ts), warmed up first, so neither the model served
 *   here nor this process's garbage collections land in the figures (SSE
 *   phases stay here: they need the model's clock);
 * - relay overhead: the scripted model runs here, so its token writes and the
 *   SSE client's reads share one clock. Each relay task's reply is a list of
 *   unique tokens ([[say]]), the model reports each token as it writes it
 *   (its onTokenWritten hook) and the client matches agent_response contents;
 * - the baseline is a separate Node process (scripts/bench-baseline-server.ts):
 *   a bare Express route doing one GET on the stack's Redis; the relay rows'
 *   baseline is a bare relay in two processes (scripts/bench-bare-relay.ts),
 *   timed right after each relay row by the same code;
 * - MCP tool calls (scripts/bench-mcp.ts): the MCP server and the model both run
 *   here, so a call's way from the model to the server and back is timed on one
 *   clock, beside a direct SDK client calling the same server.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { startStack, Stack } from '../src/launcher/stack';
import { ChildLogs } from '../src/launcher/child-logs';
import { startScriptedModel } from '../src/scripted-model';
import { keys } from '../src/relay/keys';
import type { ClientJob, ClientResult, RequestSpec } from './bench-client';
import { BenchClient, startBenchClient } from './bench-client-host';
import { closedLoop, openSse, target } from './bench-http';
import { runLoad, LoadResult } from './bench-load';
import { parseOptions, Phase } from './bench-options';
import { RELAY_TOKEN } from './bench-relay';
import type { BareRelay } from './bench-bare-relay';
import { runRelayPhase } from './bench-relay-phase';
import { CpuMeter, cpuProbeMs, processBusyS, spawnBenchServer, stopChild, waitForPort, waitQuiet } from './bench-proc';
import { monotonicUs } from './bench-profile';
import { guardRun, stackEnv } from './bench-setup';
import { Burst, CLIENT_WARMUP, printProfiles, printReport, Row, submitSplitRows } from './bench-report';
import { fmtMs, RelaySplit, summarize } from './bench-stats';
import { runMcpPhase, ToolCallClock } from './bench-mcp';
import { runDagPhase } from './bench-dag';
import { runDatastorePhase } from './bench-datastores';
import { runStatusLoad } from './bench-status-load';
import { RelayWatcher } from './bench-watch';

const API_KEY = 'bench-key-0123456789';
/** Keys of the load phase's accounts (load0, load1, ...). */
const loadKey = (i: number) => `bench-load-${i}-0123456789`;
const BASELINE_KEY = 'aes:bench:baseline';

const TARGETS = { submit: 20, status: 5, statusUnderLoad: 10, statusSaturated: 50, result: 10, relay: 5 } as const;

const started = performance.now();
const log = (s: string) => console.log(`[bench +${((performance.now() - started) / 1000).toFixed(1)}s] ${s}`);

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const deadline = started + opts.timeLimitS * 1000;
  const left = () => deadline - performance.now();

  // Token emission times, keyed by the token text (see RELAY_TOKEN).
  const emittedAt = new Map<string, number>();
  const mcpClock = new ToolCallClock();
  const model = await startScriptedModel({
    port: 0,
    onTokenWritten: (delta) => {
      mcpClock.onDelta(delta);
      const c = delta.content;
      if (typeof c === 'string') {
        const k = c.trim();
        if (RELAY_TOKEN.test(k)) emittedAt.set(k, performance.now());
      }
    },
  });

  const apiKeys = [`${API_KEY}:bench`, ...Array.from({ length: opts.loadAccounts }, (_, i) => `${loadKey(i)}:load${i}`)];
  const { env, profileDir, restore: restoreProfilingEnv } = stackEnv(opts, apiKeys, model.url);

  // Removed by cleanup(); only the bench's own temporary folder.
  const dataDir = opts.persist ? fs.mkdtempSync(path.join(os.tmpdir(), 'aes-bench-')) : undefined;
  let stack: Stack | undefined;
  let baseline: ChildProcess | undefined;
  let bare: BareRelay | undefined;
  let watcher: RelayWatcher | undefined;
  let redis: Redis | undefined;
  let client: BenchClient | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      watcher?.stop();
      client?.close();
      redis?.disconnect();
      if (baseline) await stopChild(baseline);
      await bare?.stop();
      await stack?.stop();
      await model.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    })());
  guardRun({
    timeLimitS: opts.timeLimitS,
    cleanup,
    children: () => [...Object.values(stack?.children ?? {}).map((c) => c.proc), baseline, ...(bare?.children ?? [])],
    log,
  });

  const rows: Row[] = [];
  let load: LoadResult | undefined;
  let loadOtherCores: number | undefined;
  let runOtherCores = 0;
  const relaySplits: RelaySplit[] = [];
  /** Submit bursts: how fast the gateway accepted them, and how fast the stack ran the tasks. */
  const bursts: Burst[] = [];
  /** CPU a submitted task costs until it has finished, by process (see the submit phase). */
  const taskCosts: Pick<Row, 'label' | 'concurrency' | 'cpuPerRequest'>[] = [];
  // Profiles are summarised over the phases only, not the children's start-up.
  const profileWindow = { fromUs: 0, toUs: Infinity };
  const cpu = new CpuMeter(() => [process.pid, baseline?.pid, client?.pid, ...(bare?.children ?? []).map((c) => c.pid), ...Object.values(stack?.children ?? {}).map((c) => c.proc.pid)]);
  const runMark = cpu.mark();
  const loadAvgStart = os.loadavg();
  const probeStart = cpuProbeMs();
  try {
    log(`starting the stack (${os.cpus().length} cores, Node ${process.version})${profileDir ? `, profiling into ${profileDir}` : ''}`);
    stack = await startStack({ gatewayPort: 0, temporalPort: 0, demoMcpPort: 0, env, log, childLogs: opts.echoChildren ? new ChildLogs({ show: log }) : undefined, dataDir });
    restoreProfilingEnv();
    profileWindow.fromUs = monotonicUs();
    // A function: the isolated phase restarts the worker under a new pid.
    const pidsNow = () => ({
      gateway: stack!.children.gateway?.proc.pid,
      worker: stack!.children.worker?.proc.pid,
      engine: stack!.children.engine?.proc.pid,
      redis: stack!.children.redis?.proc.pid,
    });
    const busyByProcess = () => {
      const out: Record<string, number> = {};
      for (const [name, pid] of Object.entries({ ...pidsNow(), baseline: baseline?.pid })) if (pid) out[name] = processBusyS(pid);
      return out;
    };
    /** CPU ms per unit of work, by process, between two busyByProcess() readings. */
    const cpuPer = (busy0: Record<string, number>, busy1: Record<string, number>, n: number) =>
      Object.fromEntries(Object.keys(busy1).map((k) => [k, ((busy1[k] - (busy0[k] ?? 0)) * 1000) / n]));
    const pids = pidsNow();
    log(`stack up: gateway ${stack.gatewayUrl} (pid ${pids.gateway}), worker pid ${pids.worker}, engine pid ${pids.engine}, redis pid ${pids.redis}`);
    redis = new Redis(stack.redisUrl, { connectionName: 'bench' });
    watcher = new RelayWatcher(stack.redisUrl);
    await watcher.start();
    const levels = opts.concurrency;
    const maxC = levels[levels.length - 1];
    client = startBenchClient(env);
    // Unmeasured: the client process's own HTTP code gets optimised before any phase times it.
    await client.warm(stack.gatewayUrl, CLIENT_WARMUP);

    baseline = spawnBenchServer('bench-baseline-server.ts', [stack.redisUrl, BASELINE_KEY], env);
    const baselinePort = waitForPort(baseline);
    baselinePort.catch(() => undefined); // reported when the baseline phase awaits it

    /** One latency row from its samples, measured since the CPU mark m0 and monotonic time fromUs. */
    const addRow = (label: string, concurrency: number | string, lat: number[], errors: number, m0: ReturnType<CpuMeter['mark']>, fromUs: number, targetP99?: number): Row => {
      const row: Row = { label, concurrency: String(concurrency), s: summarize(lat), errors, targetP99, otherCores: CpuMeter.foreignCores(m0, cpu.mark()), window: { fromUs, toUs: monotonicUs() } };
      rows.push(row);
      log(`${label} @${concurrency}: n=${row.s.count} p50=${fmtMs(row.s.p50)} ms p99=${fmtMs(row.s.p99)} ms errors=${errors}`);
      return row;
    };
    const measure = async (label: string, C: number, n: number, job: (i: number) => Promise<{ ms: number; ok: boolean }>, targetP99?: number): Promise<Row> => {
      const lat: number[] = [];
      let errors = 0;
      const m0 = cpu.mark();
      const fromUs = monotonicUs();
      await closedLoop(n, C, async (i) => {
        if (left() <= 0) return;
        try {
          const r = await job(i);
          if (r.ok) lat.push(r.ms);
          else errors++;
        } catch {
          errors++;
        }
      });
      return addRow(label, C, lat, errors, m0, fromUs, targetP99);
    };
    const warm = async (C: number, n: number, job: (i: number) => Promise<unknown>) => closedLoop(n, C, async (i) => void (await job(i).catch(() => undefined)));
    // Requests timed by the measuring client, a process of its own (see bench-client.ts).
    const remote = async (label: string, concurrency: number | string, job: Partial<ClientJob> & Pick<ClientJob, 'requests'>, ok: (status: number) => boolean, targetP99?: number) => {
      const q = await waitQuiet(() => [...Object.values(pidsNow()), baseline?.pid]);
      if (!q.quiet) log(`${label} @${concurrency}: the stack did not settle (${q.cores.toFixed(2)} cores busy after ${(q.waitedMs / 1000).toFixed(1)} s); measuring anyway`);
      const m0 = cpu.mark();
      const fromUs = monotonicUs();
      const busy0 = busyByProcess();
      const result = await client!.run({ base: stack!.gatewayUrl, key: API_KEY, concurrency: 1, warmup: [], ...job });
      const busy1 = busyByProcess();
      const lat: number[] = [];
      let errors = 0;
      result.ms.forEach((ms, i) => (ok(result.status[i]) && Number.isFinite(ms) ? lat.push(ms) : errors++));
      const row = addRow(label, concurrency, lat, errors, m0, fromUs, targetP99);
      const n = result.ms.length;
      if (n) row.cpuPerRequest = cpuPer(busy0, busy1, n);
      return result;
    };
    const submits = (tag: string, n: number): RequestSpec[] => Array.from({ length: n }, (_, i) => ({ method: 'POST', path: '/', body: { message: `[[say text=ok]] ${tag} ${i}`, background: true } }));
    const gets = (paths: string[], n: number): RequestSpec[] => Array.from({ length: n }, (_, i) => ({ method: 'GET', path: paths[i % paths.length] }));
    const is202 = (status: number) => status === 202;
    const is200 = (status: number) => status === 200;
    const taskIds = (result: ClientResult) => (result.bodies ?? []).flatMap((b, i) => (result.status[i] === 202 ? [(JSON.parse(b) as { task_id: string }).task_id] : []));

    // ---- 1. submit --------------------------------------------------------
    // The tasks it creates (quick replies) are the finished tasks that the
    // status and result phases read.
    const finished: string[] = [];
    if (['submit', 'isolated', 'status', 'result', 'baseline'].some((p) => opts.phases.has(p as Phase))) {
      const warmup = await client.run({ base: stack.gatewayUrl, key: API_KEY, concurrency: maxC, warmup: [], requests: submits('warmup', opts.warmup), keepBodies: true });
      finished.push(...taskIds(warmup));
      // Each submit leaves workflow and activity work behind; every submit row
      // starts once the previous row's tasks are done, so rows are comparable.
      const drain = () => watcher!.waitAll([...finished], Math.min(90_000, Math.max(1000, left())));
      await drain();
      if (opts.phases.has('submit')) {
        // The target is judged at steady rates the stack keeps up with (open
        // loop: requests leave on schedule whatever the answers do), the way a
        // service runs. A closed loop with no think time offers ten times more
        // tasks per second than two cores can run; its rows (bursts) say how
        // fast the gateway accepts a backlog, and what a task costs.
        for (const rate of opts.submitPaced > 0 ? opts.submitRates : []) {
          const r = await remote('submit: POST / background -> 202', `${rate}/s paced`, { requests: submits(`bench paced ${rate}`, opts.submitPaced), rate, keepBodies: true }, is202, TARGETS.submit);
          rows.push(...submitSplitRows(r, is202, `${rate}/s paced`, rows[rows.length - 1].otherCores));
          finished.push(...taskIds(r));
          await drain();
        }
        for (const C of levels) {
          await drain();
          const busy0 = busyByProcess();
          const r = await remote('submit burst: POST / background -> 202 (overload)', C, { concurrency: C, requests: submits(`bench submit ${C}`, opts.submit), keepBodies: true }, is202);
          const fromUs = rows[rows.length - 1].window!.fromUs;
          const acceptedS = (monotonicUs() - fromUs) / 1e6;
          const ids = taskIds(r);
          finished.push(...ids);
          // What a task costs from its submit to its end, wherever the work lands (the worker mostly runs after the row).
          const missing = await watcher.waitAll(ids, Math.min(90_000, Math.max(1000, left())));
          const ranS = (monotonicUs() - fromUs) / 1e6;
          await waitQuiet(() => Object.values(pidsNow()));
          const busy1 = busyByProcess();
          if (ids.length) {
            taskCosts.push({
              label: 'one background task, submit to completed',
              concurrency: String(C),
              cpuPerRequest: cpuPer(busy0, busy1, ids.length),
            });
            bursts.push({ clients: C, submitted: ids.length, acceptedS, ranS, finished: ids.length - missing.length });
          }
        }
      }
      if (opts.phases.has('isolated')) {
        // Diagnostic: the submit path alone. With the worker stopped nothing
        // runs the tasks, so no workflow or activity work competes with the
        // gateway and the engine for the cores; the tasks run once it is back.
        await drain();
        log('isolated: stopping the worker');
        await stack.children.worker.stop();
        for (const C of levels) {
          const r = await remote('submit burst, worker stopped (submit path alone)', C, { concurrency: C, warmup: submits(`isolated warmup ${C}`, Math.min(opts.warmup, 20)), requests: submits(`isolated ${C}`, opts.submit), keepBodies: true }, is202);
          rows.push(...submitSplitRows(r, is202, String(C), rows[rows.length - 1].otherCores));
          finished.push(...taskIds(r));
        }
        log('isolated: restarting the worker');
        await stack.startWorker();
      }
      const missing = await watcher.waitAll(finished, Math.min(150_000, Math.max(5000, left())));
      if (missing.length) log(`warning: ${missing.length} submitted tasks did not finish in time`);
      log(`${finished.length - missing.length} submitted tasks finished; they serve the status and result phases`);
      // The last event precedes the workflow's close in Temporal by a few ms.
      await sleep(1000);
    }
    const ids = finished.filter((id) => watcher!.ended.get(id)?.type === 'agent_completed');
    const statusPaths = ids.map((id) => `/tasks/${id}`);

    // ---- 2b. status while tasks complete around the reads (issue 35) --------
    if (opts.phases.has('status-load')) {
      // A first pass unrecorded: on a stack just started (--phases status-load) the first hundred
      // tasks meet cold code in every process, and whichever pass came first measured that (p99 twice).
      for (const paced of [undefined, true, false]) {
        await waitQuiet(() => Object.values(pidsNow()));
        if (paced === undefined) {
          await runStatusLoad({ client, base: stack.gatewayUrl, key: API_KEY, tasks: opts.statusLoadTasks, paced: true, watcher, log });
          continue;
        }
        const m0 = cpu.mark();
        const baselineUrl = paced ? `http://127.0.0.1:${await baselinePort}` : undefined;
        if (baselineUrl) await redis.set(BASELINE_KEY, JSON.stringify({ task_id: 'task_baseline', status: 'running' }));
        const load = await runStatusLoad({ client, base: stack.gatewayUrl, key: API_KEY, tasks: opts.statusLoadTasks, paced, baselineUrl, watcher, log });
        const label = `status under load: GET /tasks/{id} while ${load.tasks} background tasks run and complete`;
        addRow(label, load.rate ? `${load.rate}/s paced` : 8, load.lat, load.errors, m0, load.fromUs, load.rate ? TARGETS.statusUnderLoad : TARGETS.statusSaturated);
        if (load.baseline) addRow('  baseline at the same time: bare Express + 1 Redis GET (own process)', `${load.rate}/s paced`, load.baseline.lat, load.baseline.errors, m0, load.fromUs);
      }
    }

    // ---- 2. status, then 7. baseline under the same conditions -------------
    for (const C of levels) {
      if (opts.phases.has('status') && ids.length) {
        await remote('status: GET /tasks/{id}', C, { concurrency: C, warmup: gets(statusPaths, opts.warmupReads), requests: gets(statusPaths, opts.status) }, is200, TARGETS.status);
      }
      if (opts.phases.has('baseline')) {
        if (!(await redis.exists(BASELINE_KEY))) {
          const doc = ids.length ? await redis.get(keys.status(ids[0])) : null;
          await redis.set(BASELINE_KEY, doc ?? JSON.stringify({ task_id: 'task_baseline', status: 'completed' }));
        }
        const bareUrl = `http://127.0.0.1:${await baselinePort}`;
        await remote('baseline: bare Express + 1 Redis GET (own process)', C, { base: bareUrl, key: null, concurrency: C, warmup: gets(['/get'], opts.warmupReads), requests: gets(['/get'], opts.baseline) }, is200);
        await remote('reference: gateway GET /healthz (no auth, no I/O)', C, { key: null, concurrency: C, warmup: gets(['/healthz'], opts.warmupReads), requests: gets(['/healthz'], opts.baseline) }, is200);
      }
    }

    // ---- 3. result ---------------------------------------------------------
    if (opts.phases.has('result') && ids.length) {
      // A task's first read misses the result cache (nothing fills it before),
      // so each count gets its own share of never-read tasks, and no warm-up
      // (it would use up first reads).
      const share = Math.floor(ids.length / levels.length);
      for (const [k, C] of levels.entries()) {
        const mine = ids.slice(k * share, (k + 1) * share).map((id) => `/tasks/${id}/result`);
        await remote('result: first read of a finished task', C, { concurrency: C, requests: gets(mine, mine.length) }, is200, TARGETS.result);
      }
      const resultPaths = ids.map((id) => `/tasks/${id}/result`);
      for (const C of levels) {
        if (opts.resultRepeat === 0) break;
        await remote('result: repeat read (cached)', C, { concurrency: C, warmup: gets(resultPaths, opts.warmupReads), requests: gets(resultPaths, opts.resultRepeat) }, is200, TARGETS.result);
      }
    }

    // ---- 5. time to first event -------------------------------------------
    if (opts.phases.has('ttfe')) {
      for (const C of levels) {
        const sseApi = target(stack.gatewayUrl, API_KEY, C);
        const headers: number[] = [];
        const runOne = async (i: number) => {
          const t0 = performance.now();
          let first: number | undefined;
          const stream = await openSse(sseApi, 'POST', '/', { message: `[[say text=hi]] ttfe ${i}`, streaming: true }, (ev) => {
            first ??= ev.at;
          });
          headers.push(stream.headersAt - t0);
          await stream.done;
          return { ms: (first ?? NaN) - t0, ok: stream.status === 200 && first !== undefined };
        };
        await warm(C, Math.min(opts.warmup, 2 * C), runOne);
        headers.length = 0;
        const row = await measure('time to first event: POST / (SSE) -> first data:', C, opts.ttfe, runOne);
        rows.push({ label: '  of which: POST / (SSE) -> response headers', concurrency: String(C), s: summarize(headers), errors: 0, otherCores: row.otherCores });
      }
    }

    // ---- 4. token relay overhead, then its baseline at each stream count ----
    if (opts.phases.has('relay')) {
      const relay = await runRelayPhase({
        opts,
        levels,
        gatewayUrl: stack.gatewayUrl,
        apiKey: API_KEY,
        redisUrl: stack.redisUrl,
        modelUrl: model.url,
        env,
        emittedAt,
        watcher,
        cpu,
        stackPids: () => Object.values(pidsNow()),
        left,
        log,
        started: (b) => (bare = b),
        targetP99: TARGETS.relay,
      });
      rows.push(...relay.rows);
      relaySplits.push(...relay.splits);
    }

    // ---- 8. MCP tool-call overhead, beside direct calls to the same server ----
    if (opts.phases.has('mcp')) {
      // This process serves the model and the MCP server: it does not also follow every event meanwhile.
      await watcher.pause();
      const m0 = cpu.mark();
      const fromUs = monotonicUs();
      const mcpRows = await runMcpPhase({ gatewayUrl: stack.gatewayUrl, apiKey: API_KEY, model, clock: mcpClock, calls: opts.mcpCalls, quiet: () => waitQuiet(() => Object.values(pidsNow())), left, log }).finally(() => watcher!.resume());
      const otherCores = CpuMeter.foreignCores(m0, cpu.mark());
      rows.push(...mcpRows.map((r) => ({ ...r, otherCores, window: { fromUs, toUs: monotonicUs() } })));
    }

    // ---- 9. DAG step scheduling ------------------------------------------------
    if (opts.phases.has('dag')) {
      await watcher.pause();
      const m0 = cpu.mark();
      const fromUs = monotonicUs();
      const dagRows = await runDagPhase({ gatewayUrl: stack.gatewayUrl, apiKey: API_KEY, temporalAddress: stack.temporalAddress, model, runs: opts.dagRuns, quiet: () => waitQuiet(() => Object.values(pidsNow())), left, log }).finally(() => watcher!.resume());
      const otherCores = CpuMeter.foreignCores(m0, cpu.mark());
      rows.push(...dagRows.map((r) => ({ ...r, otherCores, window: { fromUs, toUs: monotonicUs() } })));
    }

    // ---- 10. Datastore named-query overhead over the bare query --------------
    if (opts.phases.has('datastores')) {
      await watcher.pause();
      const m0 = cpu.mark();
      const fromUs = monotonicUs();
      const dsRows = await runDatastorePhase({ gatewayUrl: stack.gatewayUrl, apiKey: API_KEY, temporalAddress: stack.temporalAddress, payloadKeys: stack.env.PAYLOAD_KEYS!, runs: opts.datastoreRuns, quiet: () => waitQuiet(() => Object.values(pidsNow())), left, log }).finally(() => watcher!.resume());
      const otherCores = CpuMeter.foreignCores(m0, cpu.mark());
      rows.push(...dsRows.map((r) => ({ ...r, otherCores, window: { fromUs, toUs: monotonicUs() } })));
    }

    // ---- 6. load ------------------------------------------------------------
    if (opts.phases.has('load')) {
      if (left() < 30_000) log('load phase skipped: not enough of the time limit left');
      else {
        log(`load: ${opts.loadTasks} background tasks over ${opts.loadAccounts} accounts ([[slow delay=${opts.loadDelayMs} tokens=${opts.loadTokens}]], streamed), ${opts.loadSse} SSE clients`);
        const m0 = cpu.mark();
        load = await runLoad({
          api: target(stack.gatewayUrl, API_KEY, opts.loadConcurrency),
          sse: target(stack.gatewayUrl, API_KEY, Infinity),
          watcher,
          model,
          pids: { ...pidsNow(), 'bench (model + clients)': process.pid },
          keys: Array.from({ length: opts.loadAccounts }, (_, i) => loadKey(i)),
          tasks: opts.loadTasks,
          sseClients: opts.loadSse,
          tokens: opts.loadTokens,
          delayMs: opts.loadDelayMs,
          concurrency: opts.loadConcurrency,
          timeoutMs: Math.min(opts.loadTimeoutS * 1000, left()),
          log,
        });
        loadOtherCores = CpuMeter.foreignCores(m0, cpu.mark());
      }
    }
  } finally {
    runOtherCores = CpuMeter.foreignCores(runMark, cpu.mark());
    profileWindow.toUs = monotonicUs();
    log('stopping the stack');
    await cleanup();
  }
  const probes = { start: probeStart, end: cpuProbeMs() };

  printReport(opts, rows, taskCosts, bursts, relaySplits, load, { run: runOtherCores, load: loadOtherCores }, loadAvgStart, probes);
  if (profileDir && stack) printProfiles(profileDir, stack, rows, profileWindow);
  if (opts.jsonOut) {
    fs.writeFileSync(opts.jsonOut, JSON.stringify({ options: { ...opts, phases: [...opts.phases] }, rows, relaySplits, load }, null, 2));
    log(`raw results written to ${opts.jsonOut}`);
  }
  const failed = (load && (load.timedOut || load.completed !== load.accepted)) || rows.some((r) => r.s.count === 0);
  process.exitCode = failed ? 1 : 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
