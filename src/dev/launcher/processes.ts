// Child processes of the single-machine start: spawn, wait until ready, stop.
import { spawn, spawnSync, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TS_LOADER_ARGS } from '../../common/ts-loader';

export const ROOT = path.resolve(__dirname, '../../..');

export interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
  /** Output collected so far (kept short), for error messages. */
  output(): string;
  /** True once a Node child said it is ready (IPC message {type: 'ready'}). */
  isReady(): boolean;
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * A port free now, for a child that binds it a moment later. It is taken below the kernel's
 * ephemeral range: a port from bind(0) lies inside that range, where outgoing connections and
 * other programs' bind(0) (the Temporal CLI dev server picks its internal ports so) may take it
 * in the gap before the child binds it (seen in CI as EADDRINUSE). Random, and claimed (see
 * `claim`) so that two processes of one machine never hand out the same port within minutes;
 * falls back to bind(0) when no port below the range is free.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const from = 10_000;
  const to = Math.min(low, 65_536) - 1;
  for (let i = 0; to > from && i < 40; i++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (claim(port) && (await canBind(port))) return port;
  }
  return bindZero();
}

/** Ports handed out lately, one file each, shared by every process of the machine. */
const CLAIMS = path.join(os.tmpdir(), 'agent-service-port-claims');
const CLAIM_TTL_MS = 10 * 60_000;

/**
 * Claims `port` for the next minutes: false when another process claimed it lately. Random picks
 * alone collide: a test suite hands out hundreds of ports, and two that picked the same one while
 * the first child still held it made CI's gateway fail with EADDRINUSE. A claim older than the TTL
 * is taken over (its holder has long bound the port, or died).
 */
function claim(port: number): boolean {
  const file = path.join(CLAIMS, String(port));
  try {
    fs.mkdirSync(CLAIMS, { recursive: true });
    fs.closeSync(fs.openSync(file, 'wx'));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true; // no claims here: the bind check alone
    try {
      if (Date.now() - fs.statSync(file).mtimeMs < CLAIM_TTL_MS) return false;
      fs.utimesSync(file, new Date(), new Date());
      return true;
    } catch {
      return true;
    }
  }
}

function ephemeralRange(): [number, number] {
  try {
    const [a, b] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (a > 0 && b >= a) return [a, b];
  } catch {
    // not Linux: the IANA range, which other systems use
  }
  return [49_152, 65_535];
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function bindZero(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Children still running: killed if this process exits without stopping them (they are not in its process group). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

export function startChild(
  name: string,
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; echo?: (line: string) => void; ipc?: boolean } = {},
): Child {
  // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and the
  // launcher must stop its children itself, in order (the gateway drains, the worker hands its
  // activities back, and only then do the engine and Redis go).
  const stdio: ('ignore' | 'pipe' | 'ipc')[] = opts.ipc
    ? ['ignore', 'pipe', 'pipe', 'ipc']
    : ['ignore', 'pipe', 'pipe'];
  const proc = spawn(cmd, args, { cwd: ROOT, env: opts.env ?? process.env, stdio, detached: true });
  let ready = false;
  proc.on('message', (m: { type?: string }) => {
    if (m?.type === 'ready') ready = true;
  });
  let buf = '';
  // Lines are echoed whole: a chunk may end mid-line (a JSON record cut in two would not parse).
  const collector = () => {
    let partial = '';
    return (d: Buffer) => {
      const s = d.toString();
      buf = (buf + s).slice(-20_000);
      if (!opts.echo) return;
      const lines = (partial + s).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) opts.echo(line);
    };
  };
  proc.stdout!.on('data', collector());
  proc.stderr!.on('data', collector());
  running.add(proc);
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  return {
    name,
    proc,
    exited,
    output: () => buf,
    isReady: () => ready,
    async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill(signal);
      const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Node child running a TypeScript entry point (bin/register-ts.js); `nodeArgs` (default none) go to node itself. */
export function startNode(
  name: string,
  entry: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; echo?: (line: string) => void; nodeArgs?: readonly string[] } = {},
): Child {
  const argv = [...(opts.nodeArgs ?? []), ...TS_LOADER_ARGS, path.join(ROOT, entry), ...args];
  return startChild(name, process.execPath, argv, { ...opts, ipc: true });
}

export async function waitFor(
  what: string,
  child: Child | undefined,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  let exited = false;
  void child?.exited.then(() => (exited = true));
  while (Date.now() < end) {
    if (exited) throw new Error(`${what} exited during start:\n${child!.output().slice(-3000)}`);
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready in ${timeoutMs} ms${child ? `:\n${child.output().slice(-3000)}` : ''}`);
}

export function which(bin: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Finds redis-server, installing Debian's package when apt is usable. */
export function ensureRedisServer(log: (s: string) => void): string {
  return ensureCommand(
    { bin: 'redis-server', pkg: 'redis-server', orElse: 'or set REDIS_URL to an existing Redis' },
    log,
  );
}

/** What a command of a Debian package is needed for, and the alternative to installing it. */
export interface NeededCommand {
  bin: string;
  pkg: string;
  /** What else the user may do, e.g. "or set REDIS_URL to an existing Redis". */
  orElse: string;
}

/** Finds a command, installing its Debian package when apt is usable (root); else throws saying what to do. */
export function ensureCommand(need: NeededCommand, log: (s: string) => void): string {
  const found = which(need.bin);
  if (found) return found;
  const canApt = which('apt-get') && typeof process.getuid === 'function' && process.getuid() === 0;
  if (!canApt) {
    throw new Error(
      `${need.bin} is not installed and apt-get is not usable here. Install it (e.g. \`sudo apt-get install ${need.pkg}\`) ${need.orElse}.`,
    );
  }
  log(`${need.bin} is missing: installing ${need.pkg} with apt-get (one time)...`);
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', need.pkg],
  ]) {
    const r = spawnSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0)
      throw new Error(`apt-get ${args.join(' ')} failed; install ${need.pkg} yourself ${need.orElse}`);
  }
  const installed = which(need.bin);
  if (!installed) throw new Error(`${need.bin} still not found after installing ${need.pkg}`);
  return installed;
}

export function ensureDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
