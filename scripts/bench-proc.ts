// Memory of the stack's processes from /proc (Linux): VmRSS now and VmHWM,
// the kernel's own peak-RSS watermark, which cannot miss a short spike the
// way sampling can.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

export interface Mem {
  rssKiB?: number;
  hwmKiB?: number;
}

export function readMem(pid: number | undefined): Mem {
  if (!pid) return {};
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      return m ? Number(m[1]) : undefined;
    };
    return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
  } catch {
    return {}; // the process is gone
  }
}

/** Samples VmRSS of each pid every `everyMs` and keeps the maximum seen. */
export class RssSampler {
  readonly peakKiB: Record<string, number> = {};
  private timer?: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number | undefined>) {}

  start(everyMs = 250): void {
    const sample = () => {
      for (const [name, pid] of Object.entries(this.pids)) {
        const rss = readMem(pid).rssKiB;
        if (rss !== undefined) this.peakKiB[name] = Math.max(this.peakKiB[name] ?? 0, rss);
      }
    };
    sample();
    this.timer = setInterval(sample, everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** Busy CPU time of the whole machine and of a set of processes, in seconds. */
export interface CpuMark {
  machineS: number;
  oursS: number;
  at: number;
}

function machineBusyS(): number {
  // cpu  user nice system idle iowait irq softirq steal ...: everything but idle and iowait is busy.
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0);
  return busy / 100; // USER_HZ is 100 on Linux
}

export function processBusyS(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces; fields after it are fixed.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime
  } catch {
    return 0;
  }
}

/**
 * Tells how much CPU the rest of the machine used during a measurement: on a
 * shared two-core box another process's burst is indistinguishable from a
 * slow request, so each row carries this as a noise figure.
 */
export class CpuMeter {
  constructor(private readonly pids: () => (number | undefined)[]) {}

  mark(): CpuMark {
    let ours = 0;
    for (const pid of this.pids()) if (pid) ours += processBusyS(pid);
    return { machineS: machineBusyS(), oursS: ours, at: Date.now() };
  }

  /** Average cores used by processes outside the bench and its stack between two marks. */
  static foreignCores(a: CpuMark, b: CpuMark): number {
    const wall = (b.at - a.at) / 1000;
    if (wall <= 0) return 0;
    return Math.max(0, b.machineS - a.machineS - (b.oursS - a.oursS)) / wall;
  }
}

export interface QuietOptions {
  /** The processes' summed CPU, in cores, below which they count as quiet (default 0.05). */
  cores?: number;
  /** Window the CPU is averaged over, ms (default 500). */
  windowMs?: number;
  /** Give up after this long, ms (default 15000). */
  timeoutMs?: number;
}

/**
 * Waits until the given processes are quiet: a phase must not start while the
 * stack still digests the previous one (workflow tasks, a compaction of the
 * engine's log, a full GC after a burst), or that work lands in its tail.
 * Returns the last window's figure and the time waited.
 */
export async function waitQuiet(pids: () => (number | undefined)[], opts: QuietOptions = {}): Promise<{ quiet: boolean; cores: number; waitedMs: number }> {
  const { cores: limit = 0.05, windowMs = 500, timeoutMs = 15_000 } = opts;
  const busy = () => pids().reduce<number>((sum, pid) => sum + (pid ? processBusyS(pid) : 0), 0);
  const t0 = Date.now();
  for (;;) {
    const a = busy();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const cores = (busy() - a) / (windowMs / 1000);
    const waitedMs = Date.now() - t0;
    if (cores < limit) return { quiet: true, cores, waitedMs };
    if (waitedMs >= timeoutMs) return { quiet: false, cores, waitedMs };
  }
}

/**
 * Starts one of the bench's own servers (a script beside this file, run through
 * bin/register-ts.js) with its stdout piped for waitForPort. Neither profiled nor given the
 * stack's NODE_OPTIONS: it is a reference, not part of what is measured.
 */
export function spawnBenchServer(file: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['-r', path.join(__dirname, '..', 'bin', 'register-ts.js'), path.join(__dirname, file), ...args], {
    cwd: path.resolve(__dirname, '..'),
    env: { ...env, NODE_OPTIONS: '', BENCH_CPU_PROF_DIR: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** SIGTERM, and resolves once the child has exited (at once if it already has). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The child side of waitForPort: listens on a free loopback port, announces it
 * on stdout, and on SIGTERM closes the server (its keep-alive connections too)
 * and then calls `onStop` for the rest (clients, agents).
 */
export async function serveAndAnnounce(server: http.Server, onStop: () => void = () => undefined): Promise<void> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    onStop();
  });
}

/** The port a child server announces as its `{"port":N}` stdout line (baseline and bench:express servers). */
export function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
}

/**
 * Milliseconds a fixed single-threaded workload takes (JSON round trips of a
 * task-result-sized document, as the service's processes do all day), best of
 * five. On a shared virtual machine the same code runs markedly slower in some
 * runs than in others with no CPU showing as used elsewhere; comparing this
 * figure between runs tells a slow machine from a slow change.
 */
export function cpuProbeMs(): number {
  const doc = {
    task_id: 'task_0123456789abcdef0123456789abcdef',
    status: 'completed',
    events: Array.from({ length: 20 }, (_, seq) => ({ type: 'agent_response', seq, content: 'word '.repeat(10) })),
    metadata: { a: 1, b: 'two' },
  };
  let best = Infinity;
  let sink = 0;
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    for (let i = 0; i < 8000; i++) sink += (JSON.parse(JSON.stringify(doc)) as typeof doc).events.length;
    best = Math.min(best, performance.now() - t0);
  }
  return sink > 0 ? best : NaN;
}

let gc: (() => void) | undefined;

/**
 * A full collection of this process's heap, now. The bench process serves the
 * model and reads the SSE streams, so a major GC of its own during a relay row
 * pauses both ends of the path it times (one such row had a 9.4 ms
 * mark-compact, from garbage the earlier phases left). The flag exposes `gc`
 * to contexts created after it is set.
 */
export function collectOwnGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}
