/**
 * End-to-end throughput, latency and memory of the embedded dev server, driven by
 * the official TypeScript SDK (client + worker in this process, server in its own),
 * and of the real Temporal CLI dev server under the same workload in the same run.
 *
 *   npm run bench:devserver -- [--engines embedded,temporal-cli] [--workflows N] [--concurrency 1,100] [--modes memory,file|none]
 *                              [--flat N (0 skips)] [--flat-step N] [--flat-concurrency N]
 *                              [--warmup N] [--time-limit S]
 *                              [--server-node-flags "..."] [--server-bin PATH] [--json FILE]
 *                              [--worker-compression gzip|none] [--worker-pollers N]
 *
 * Environment equivalents: BENCH_ENGINES, BENCH_WORKFLOWS, BENCH_CONCURRENCY, BENCH_MODES,
 * BENCH_FLAT_WORKFLOWS, BENCH_FLAT_STEP, BENCH_FLAT_CONCURRENCY, BENCH_WARMUP, BENCH_TIME_LIMIT_S,
 * BENCH_SERVER_NODE_FLAGS, BENCH_SERVER_BIN. Flags win over the environment.
 *
 * The worker runs with the SDK's defaults (gzip-compressed requests, 10 pollers per
 * task kind), as an application would; --worker-compression none and
 * --worker-pollers N change that, to tell server cost from SDK defaults.
 *
 * Each case (engine x persistence mode x concurrency) gets a fresh server on a free port
 * (the package's bin/temporal-dev, or the real `temporal server start-dev` installed into .tools/ by
 * scripts/install-temporal-cli.sh), so peak RSS (VmHWM) belongs to that case alone. Both
 * engines run each mode x concurrency back to back, so machine load hits them alike; the
 * report pairs them (embedded / real) and says whether the embedded engine's throughput
 * with persistence reached the real server's. Every workflow runs one trivial activity;
 * latency is client start call -> result. The memory-flatness run (embedded only) drives
 * --flat workflows at --flat-concurrency (default 100) with persistence and samples the server's
 * RSS and its heap after a forced GC every --flat-step workflows.
 *
 * Profiling the server: --server-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof"
 * (the profile is written when the server exits at the end of each case).
 * --server-bin runs another checkout's launcher (e.g. a `git archive` snapshot of a
 * commit), so a baseline can be measured while the work tree is mid-change.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DefaultLogger, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { failedCase, runCase, runFlat, type CaseResult, type FlatSample } from './bench-devserver-cases';
import type { BenchContext, DriveResult } from './bench-devserver-drive';
import { parseOptions, type Options } from './bench-devserver-options';
import { fmt, printCases, printComparison, printFlatSummary } from './bench-devserver-report';
import { SERVER_EXIT_GRACE_MS, SERVER_PROBE, liveServers, type ServerSpec } from './bench-devserver-server';
import { realTemporalCli } from '../test/support/real-temporal';

const WORKFLOWS_PATH = path.join(__dirname, 'bench-devserver-workflows.ts');
/** Stop issuing new workflows this long before the hard limit, so the summary still prints. */
const SOFT_LIMIT_MARGIN_MS = 60_000;

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
  const watchdog = armStops(opts);

  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-devserver-'));
  tmpDirToRemove = tmpDir;
  const probePath = path.join(tmpDir, 'heap-probe.cjs');
  fs.writeFileSync(probePath, SERVER_PROBE);

  const servers = serverSpecs(opts, probePath);
  printPreamble(opts, servers);
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('ERROR') });
  const ctx: BenchContext = { opts, tmpDir, servers, bundle, softDeadline };

  const results = await runCases(ctx);
  let comparison: ReturnType<typeof printComparison> | undefined;
  if (results.length > 0) {
    console.log(
      `\nthroughput and latency (${opts.workflows} workflows of one activity each; latency = client start call -> result)`,
    );
    printCases(results);
    if (opts.engines.length > 1) comparison = printComparison(results);
  }

  const flat = opts.flatWorkflows > 0 && Date.now() < softDeadline ? await flatnessRun(ctx) : undefined;
  printTarget(results);
  if (opts.jsonOut)
    fs.writeFileSync(
      opts.jsonOut,
      JSON.stringify(
        { options: opts, results, comparison: comparison?.rows, goal: comparison?.goal, flat: flat?.samples },
        null,
        2,
      ),
    );
  clearTimeout(watchdog);
}

/** The hard stop at the time limit, and a clean stop on SIGINT or SIGTERM: whatever hangs (server, worker, SDK), the bench ends and cleans up. */
function armStops(opts: Options): NodeJS.Timeout {
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
  return watchdog;
}

/** What is measured, on what machine and with which servers. */
function printPreamble(opts: Options, servers: BenchContext['servers']): void {
  console.log(
    `bench:devserver  engines ${opts.engines.join(',')}  workflows/case ${opts.workflows} (+${opts.warmup} warm-up)  concurrency ${opts.concurrency.join(',')}  ` +
      `persistence ${opts.modes.join(',')}  flatness run ${opts.flatWorkflows}  time limit ${opts.timeLimitS} s`,
  );
  console.log(
    `machine: ${os.cpus().length} cores, node ${process.version}; server ${opts.serverBin}, node flags: ${opts.serverNodeFlags.join(' ') || '(none)'}`,
  );
  const real = servers['temporal-cli'];
  if (real)
    console.log(`real dev server: ${real.bin} (${execFileSync(real.bin, ['--version'], { encoding: 'utf8' }).trim()})`);
  console.log(
    `worker: request compression ${opts.workerCompression}, pollers per task kind ${opts.workerPollers ?? 'SDK default (10)'}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

/** The memory-flatness run and its summary; undefined (and exit code 1) when it failed. */
async function flatnessRun(ctx: BenchContext): Promise<{ samples: FlatSample[]; result: DriveResult } | undefined> {
  try {
    const flat = await runFlat(ctx);
    printFlatSummary(flat.samples, ctx.opts.flatStep);
    return flat;
  } catch (err) {
    console.error(`memory flatness run failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
    return undefined;
  }
}

/** The engine's throughput target, when its case ran: 150 wf/s with persistence at concurrency 100. */
function printTarget(results: CaseResult[]): void {
  const filePersisted = results.find((r) => r.engine === 'embedded' && r.mode === 'file' && r.concurrency === 100);
  if (filePersisted) {
    const ok = filePersisted.perSecond >= 150;
    console.log(
      `\ntarget >= 150 wf/s with persistence at concurrency 100: ${fmt(filePersisted.perSecond, 0)} wf/s -> ${ok ? 'MET' : 'NOT MET'}`,
    );
  }
}

/** The embedded spec is always there (the flatness run uses it); the real one only when asked for. */
function serverSpecs(opts: Options, probePath: string): BenchContext['servers'] {
  const embedded: ServerSpec = { engine: 'embedded', bin: opts.serverBin, nodeFlags: opts.serverNodeFlags, probePath };
  if (!opts.engines.includes('temporal-cli')) return { embedded };
  return { embedded, 'temporal-cli': { engine: 'temporal-cli', bin: realTemporalCli(), nodeFlags: [], probePath } };
}

async function runCases(ctx: BenchContext): Promise<CaseResult[]> {
  const { opts } = ctx;
  const results: CaseResult[] = [];
  for (const mode of opts.modes) {
    for (const concurrency of opts.concurrency) {
      for (const engine of opts.engines) {
        if (Date.now() > ctx.softDeadline) return results;
        process.stdout.write(`  running ${engine} ${mode} x concurrency ${concurrency} ... `);
        try {
          const r = await runCase(ctx, ctx.servers[engine]!, mode, concurrency);
          console.log(`${fmt(r.perSecond, 0)} wf/s`);
          results.push(r);
        } catch (err) {
          // One broken case (say, a server that will not start) should not hide the others' numbers.
          console.log('FAILED');
          console.error(err instanceof Error ? err.message : err);
          results.push(failedCase(engine, mode, concurrency, opts.workflows, err));
          process.exitCode = 1;
        }
      }
    }
  }
  return results;
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
