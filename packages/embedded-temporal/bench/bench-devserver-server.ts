// The dev server under test as a child process of the bench: starting it on a free port,
// reading its memory, CPU and event-loop figures, and stopping it.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Engine } from './bench-devserver-options';

const SERVER_READY_MS = 60_000;
export const SERVER_EXIT_GRACE_MS = 20_000;

/**
 * Preloaded into the server (node -r) so the bench can ask, over the IPC channel,
 * for heap use after a full GC and for event-loop utilisation (how saturated the
 * server's one JS thread is); bin/temporal-dev itself stays untouched. It also
 * stops the server if the bench dies without cleaning up (the channel closes).
 */
export const SERVER_PROBE = `'use strict';
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

/**
 * How to launch the server. Embedded: node runs the launcher script `bin` with the extra
 * node flags and the heap probe preloaded. temporal-cli: `bin` is the real `temporal`
 * executable, spawned directly so its pid (and /proc figures) are the Go server's own.
 */
export interface ServerSpec {
  engine: Engine;
  bin: string;
  nodeFlags: string[];
  probePath: string;
}

export function launchCommand(
  spec: ServerSpec,
  port: number,
  dbFile: string | undefined,
): { file: string; args: string[]; cwd?: string } {
  const common = [
    'server',
    'start-dev',
    '--headless',
    '--port',
    String(port),
    '--log-level',
    'warn',
    ...(dbFile ? ['--db-filename', dbFile] : []),
  ];
  if (spec.engine === 'temporal-cli') return { file: spec.bin, args: [...common, '--ip', '127.0.0.1'] };
  const args = [...spec.nodeFlags, '--expose-gc', '-r', spec.probePath, spec.bin, ...common];
  return { file: process.execPath, args, cwd: path.dirname(path.dirname(spec.bin)) };
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

export function utilisation(from: EluReading, to: EluReading): number {
  const active = to.active - from.active;
  const idle = to.idle - from.idle;
  return active / (active + idle);
}

export class ServerProcess {
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
    const { file, args, cwd } = launchCommand(spec, port, dbFile);
    const stdio: StdioOptions =
      spec.engine === 'embedded' ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
    const child = spawn(file, args, { cwd, stdio });
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
      if (this.exitCode !== undefined)
        throw new Error(`server exited with ${this.exitCode} during start:\n${this.tail}`);
      const [host, port] = this.address.split(':');
      if ((await canConnect(host, Number(port))) && (await namespaceReady(this.address))) return;
      if (Date.now() > until)
        throw new Error(
          `server on ${this.address} not serving namespace default after ${SERVER_READY_MS} ms:\n${this.tail}`,
        );
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

  /** Undefined (figures read NaN) for the real server: it has no probe and no IPC channel. */
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
export function machineBusySeconds(): number {
  try {
    const [user, nice, system, , , irq, softirq, steal] = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

export const liveServers = new Set<ChildProcess>();

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

/** The real server accepts connections before its default namespace exists; workflows started then fail. */
async function namespaceReady(address: string): Promise<boolean> {
  try {
    const c = await Connection.connect({ address, connectTimeout: 1000 });
    try {
      await c.workflowService.describeNamespace({ namespace: 'default' });
      return true;
    } finally {
      await c.close();
    }
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
