// What the bench sets up around its measurements, and the processes it reads:
// the stack's environment, the guards that stop everything it started however
// the run ends, its own processes (spawned, announced, stopped), the CPU and
// memory of every process from /proc (Linux), and its view of the event relay.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { CHANNEL_PREFIX, taskIdFromChannel } from '../src/common/relay/keys';
import type { AgentEvent } from '../src/common/relay/events';
import { TS_LOADER, TS_LOADER_ARGS } from '../src/common/ts-loader';
import { PROFILE_ENV } from './profile';

const ROOT = path.resolve(__dirname, '..');

// ---- the stack's environment and the run's guards ---------------------------------

export interface StackEnv {
  env: NodeJS.ProcessEnv;
  /** Absolute folder of the CPU profiles; unset when not profiling. */
  profileDir?: string;
  /** Takes this process's profiling settings back out once the stack is up (call once). */
  restore(): void;
}

/**
 * The stack's environment: this machine's own, minus what would point the
 * stack elsewhere, plus `apiKeys` (`key:account` pairs) and the scripted model
 * at `modelUrl`. An OPENAI_API_KEY stops the stack from starting its own
 * scripted model, so the worker talks to the bench's (the one with the hook).
 * ENGINE is kept: it picks the stack's engine (embedded unless it says otherwise).
 */
export function stackEnv(profileDir: string | undefined, apiKeys: string[], modelUrl: string): StackEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'PORT',
    'API_KEYS',
    'DATA_DIR',
    'NODE_OPTIONS',
  ])
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
  });
  if (!profileDir) return { env, restore: () => undefined };
  const dir = path.resolve(profileDir);
  fs.mkdirSync(dir, { recursive: true });
  const saved = process.env.NODE_OPTIONS;
  // Node refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the same profiler.
  env.NODE_OPTIONS = `--require ${TS_LOADER} --require ${path.join(__dirname, 'profile.ts')}`;
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
export function guardRun(g: {
  timeLimitS: number;
  cleanup: () => Promise<void>;
  children: () => (ChildProcess | undefined)[];
  log: (line: string) => void;
}): void {
  process.on('exit', () => {
    for (const c of g.children()) if (c?.pid && c.exitCode === null) safeKill(c.pid);
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      g.log(`${sig}: stopping the stack`);
      void g.cleanup().finally(() => process.exit(130));
    });
  }
  const hardStop = setTimeout(
    () => {
      g.log('hard time limit reached: stopping everything');
      void g.cleanup().finally(() => process.exit(2));
    },
    (g.timeLimitS + 90) * 1000,
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

// ---- the bench's own processes ---------------------------------------------------

/**
 * Starts one of the bench's own entry points (a file of this folder, through
 * bin/register-ts.js) with its stdout piped for `announced`. Neither profiled
 * nor given the stack's NODE_OPTIONS: it is a reference, not what is measured.
 */
export function spawnEntry(file: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...TS_LOADER_ARGS, path.join(__dirname, file), ...args], {
    cwd: ROOT,
    env: { ...env, NODE_OPTIONS: '', [PROFILE_ENV]: '' },
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

/** The child side of `announced`: prints one JSON line on stdout. */
export function announce(what: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(what)}\n`);
}

/**
 * Serves `server` on a free loopback port, announces `{"port":N}`, and on
 * SIGTERM closes it (its keep-alive connections too), then calls `onStop`.
 */
export async function serveAndAnnounce(server: http.Server, onStop: () => void = () => undefined): Promise<void> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  announce({ port: (server.address() as AddressInfo).port });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    onStop();
  });
}

/** The first JSON object with `key` that a child prints on a line of its stdout (see `announce`). */
export function announced<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n').filter((l) => l.startsWith(`{"${key}":`))) {
        try {
          return resolve(JSON.parse(line) as T);
        } catch {
          // the line is not complete yet
        }
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${child.spawnargs.slice(2).join(' ')} exited (${code}) before it was ready`)),
    );
  });
}

export const waitForPort = async (child: ChildProcess): Promise<number> =>
  (await announced<{ port: number }>(child, 'port')).port;

// ---- CPU and memory from /proc -------------------------------------------------

export interface Mem {
  rssKiB?: number;
  /** VmHWM, the kernel's own peak-RSS watermark, which cannot miss a spike the way sampling can. */
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

/** Seconds of CPU (user + system) a process has used. */
export function processBusyS(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces; the fields after it are fixed.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime; USER_HZ 100
  } catch {
    return 0;
  }
}

function machineBusyS(): number {
  // cpu  user nice system idle iowait irq softirq steal ...: all but idle and iowait is busy.
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)) / 100;
}

export interface CpuMark {
  machineS: number;
  oursS: number;
  at: number;
}

/**
 * How much CPU the rest of the machine used during a measurement: on a shared
 * two-core box another process's burst is indistinguishable from a slow
 * request, so each row carries this as a noise figure.
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

/**
 * Waits until the given processes together use under 0.05 cores for half a
 * second (at most 15 s): a row must not start while the stack still digests
 * the previous one (workflow tasks, a compaction, a full GC after a burst).
 */
export async function waitQuiet(
  pids: () => (number | undefined)[],
): Promise<{ quiet: boolean; cores: number; waitedMs: number }> {
  const busy = () => pids().reduce<number>((sum, pid) => sum + (pid ? processBusyS(pid) : 0), 0);
  const t0 = Date.now();
  for (;;) {
    const a = busy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cores = (busy() - a) / 0.5;
    const waitedMs = Date.now() - t0;
    if (cores < 0.05) return { quiet: true, cores, waitedMs };
    if (waitedMs >= 15_000) return { quiet: false, cores, waitedMs };
  }
}

// ---- the bench's view of the event relay -------------------------------------------

export interface Ended {
  type: string;
  /** performance.now() when the terminal event was seen. */
  at: number;
}

/**
 * A pattern subscription on the stack's Redis to every task's event channel.
 * It tells the bench when tasks end without polling the API (polling would add
 * load to the gateway being measured), and it stamps when a token reached Redis
 * pub/sub, which splits the relay's time into the worker's and the gateway's hop.
 */
export class RelayWatcher {
  readonly ended = new Map<string, Ended>();
  /** Extra per-event callback (the relay phase's hop split); cheap when unset. */
  onEvent?: (ev: AgentEvent, at: number) => void;
  private readonly sub: Redis;
  private waiters: (() => void)[] = [];

  constructor(redisUrl: string) {
    this.sub = new Redis(redisUrl, { lazyConnect: true, connectionName: 'bench-watch' });
    this.sub.on('pmessage', (_pattern: string, channel: string, message: string) => this.onMessage(channel, message));
  }

  private onMessage(channel: string, message: string): void {
    const at = performance.now();
    const taskId = taskIdFromChannel(channel);
    if (!taskId) return;
    let ev: AgentEvent;
    try {
      // `<publish ms> <JSON>`, as the relay publishes (src/common/relay/publisher.ts).
      ev = JSON.parse(message.startsWith('{') ? message : message.slice(message.indexOf(' ') + 1)) as AgentEvent;
    } catch {
      return;
    }
    this.onEvent?.(ev, at);
    if (ev.type !== 'agent_completed' && ev.type !== 'agent_error') return;
    if (!this.ended.has(taskId)) this.ended.set(taskId, { type: ev.type, at });
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  async start(): Promise<void> {
    await this.sub.connect();
    await this.resume();
  }

  /** Resolves when every id has ended or the time is up; returns the ids still running. */
  async waitAll(ids: string[], timeoutMs: number): Promise<string[]> {
    const end = performance.now() + timeoutMs;
    for (;;) {
      const missing = ids.filter((id) => !this.ended.has(id));
      if (missing.length === 0 || performance.now() >= end) return missing;
      // Wake on the next terminal event, or after a second.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(1000, Math.max(1, end - performance.now())));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /**
   * Unsubscribes until resume(). The subscription is an observer the service
   * does not have: Redis writes every event to it too, and this process wakes
   * for each one, on the very cores whose delays the relay row measures. Tasks
   * that end meanwhile are not seen.
   */
  async pause(): Promise<void> {
    await this.sub.punsubscribe();
  }

  async resume(): Promise<void> {
    await this.sub.psubscribe(`${CHANNEL_PREFIX}*`);
  }

  stop(): void {
    this.sub.disconnect();
  }
}
