/**
 * End-to-end throughput, latency and memory of the embedded dev server, driven by
 * the official TypeScript SDK (client + worker in this process, server in its own).
 *
 *   npm run bench:devserver -- [--workflows N] [--concurrency 1,100] [--modes memory,file|none]
 *                              [--flat N (0 skips)] [--flat-step N] [--flat-concurrency N]
 *                              [--warmup N] [--time-limit S]
 *                              [--server-node-flags "..."] [--server-bin PATH] [--json FILE]
 *                              [--worker-compression gzip|none] [--worker-pollers N]
 *
 * Environment equivalents: BENCH_WORKFLOWS, BENCH_CONCURRENCY, BENCH_MODES,
 * BENCH_FLAT_WORKFLOWS, BENCH_FLAT_STEP, BENCH_FLAT_CONCURRENCY, BENCH_WARMUP, BENCH_TIME_LIMIT_S,
 * BENCH_SERVER_NODE_FLAGS, BENCH_SERVER_BIN. Flags win over the environment.
 *
 * The worker runs with the SDK's defaults (gzip-compressed requests, 10 pollers per
 * task kind), as an application would; --worker-compression none and
 * --worker-pollers N change that, to tell server cost from SDK defaults.
 *
 * Each case gets a fresh server (bin/temporal-dev on a free port), so peak RSS
 * (VmHWM) belongs to that case alone. Every workflow runs one trivial activity;
 * latency is client start call -> result. The memory-flatness run drives
 * --flat workflows at --flat-concurrency (default 100) with persistence and samples the server's
 * RSS and its heap after a forced GC every --flat-step workflows.
 *
 * Profiling the server: --server-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof"
 * (the profile is written when the server exits at the end of each case).
 * --server-bin runs another checkout's launcher (e.g. a `git archive` snapshot of a
 * commit), so a baseline can be measured while the work tree is mid-change.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DefaultLogger, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { failedCase, runCase, runFlat, type CaseResult, type FlatSample } from './bench-devserver-cases';
import type { BenchContext, DriveResult } from './bench-devserver-drive';
import { parseOptions } from './bench-devserver-options';
import { fmt, printCases, printFlatSummary } from './bench-devserver-report';
import { SERVER_EXIT_GRACE_MS, SERVER_PROBE, liveServers } from './bench-devserver-server';

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
