// How the bench measures: a keep-alive HTTP client timed from the call to the
// last body byte, an SSE reader that stamps each chunk as it arrives, closed
// loops of clients, nearest-rank percentiles over the raw samples, the CPU and
// memory of processes from /proc (Linux), and probes of this process and
// machine (CPU speed, its own garbage). It is also the preload that profiles
// the stack's processes under `--profile` (see the end of this file).
//
// node:http rather than fetch: its per-request client cost is smaller and
// steadier, and on two shared cores every client-side microsecond shows up in
// the gateway's measured latency. Exact percentiles rather than histograms: a
// few thousand samples fit in memory, and they keep p99 honest at small counts.
import fs from 'node:fs';
import http from 'node:http';
import inspector from 'node:inspector';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { threadId } from 'node:worker_threads';

// ---- statistics -----------------------------------------------------------------------

// The engine's package holds the one copy (its benches may import nothing of the service's tree).
export { fmtMs, percentile, summarize, type Summary } from '../packages/embedded-temporal/bench/bench-stats';

export function fmtMiB(kib: number | undefined): string {
  return kib === undefined ? '-' : `${(kib / 1024).toFixed(0)} MiB`;
}

/** Fixed-width text table; the first row is the header. */
export function table(rows: string[][], rightAlign: (col: number) => boolean = (c) => c > 0): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => (rightAlign(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd();
  const sep = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]), sep, ...rows.slice(1).map(line)].join('\n');
}

/** Epoch milliseconds with sub-millisecond resolution (the clock the MCP server fixture stamps with). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** Microseconds on the monotonic clock, the one V8 stamps CPU profile samples with. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---- HTTP client ----------------------------------------------------------------------

export interface Timed {
  status: number;
  body: string;
  /** Call to last body byte, ms. */
  ms: number;
  /** The response's Server-Timing header, if any. */
  serverTiming?: string;
}

export interface HttpTarget {
  base: URL;
  agent: http.Agent;
  /** Bearer key; null sends no Authorization header. */
  key: string | null;
}

/** keepAlive and a socket cap equal to the client count: every timed request reuses a warm connection. */
export function target(baseUrl: string, key: string | null, maxSockets: number): HttpTarget {
  return {
    base: new URL(baseUrl),
    agent: new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 256) }),
    key,
  };
}

/** Per-call overrides: another account's key on a shared agent, a timeout. */
export interface CallOptions {
  key?: string;
  timeoutMs?: number;
}

function headersFor(
  t: HttpTarget,
  body: string | undefined,
  key: string | undefined,
  extra: Record<string, string> = {},
): http.OutgoingHttpHeaders {
  const h: http.OutgoingHttpHeaders = { ...extra };
  const k = key ?? t.key;
  if (k !== null) h.authorization = `Bearer ${k}`;
  if (body !== undefined) {
    h['content-type'] = 'application/json';
    h['content-length'] = Buffer.byteLength(body);
  }
  return h;
}

export function request(
  t: HttpTarget,
  method: string,
  path: string,
  json?: unknown,
  call: CallOptions = {},
): Promise<Timed> {
  const timeoutMs = call.timeoutMs ?? 30_000;
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: t.base.hostname,
        port: t.base.port,
        method,
        path,
        agent: t.agent,
        headers: headersFor(t, body, call.key),
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const ms = performance.now() - t0;
          const serverTiming = res.headers['server-timing'];
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(parts).toString('utf8'),
            ms,
            ...(typeof serverTiming === 'string' && { serverTiming }),
          });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST / that ran to its end: its task id when it answered 200 with a completed task. */
export function completedTaskId(r: { status: number; body: string }): string | undefined {
  if (r.status !== 200 || !/"status":"completed"/.test(r.body)) return undefined;
  return /"task_id":"(task_[A-Za-z0-9]+)"/.exec(r.body)?.[1];
}

export interface SseEvent {
  id?: string;
  data: any;
  /** performance.now() when the chunk carrying this event's end arrived. */
  at: number;
}

export interface SseStream {
  status: number;
  /** performance.now() when the response headers arrived. */
  headersAt: number;
  /** Resolves when the server ends the stream (or close() is called). */
  done: Promise<void>;
  close(): void;
}

/** The `data:` events of the complete blocks in buf, handed to onEvent; returns what is left of buf. */
function parseSseBlocks(buf: string, at: number, onEvent: (ev: SseEvent) => void): string {
  let i: number;
  while ((i = buf.indexOf('\n\n')) >= 0) {
    const block = buf.slice(0, i);
    buf = buf.slice(i + 2);
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) continue; // comments: stream open, heartbeats
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.join('\n'));
    } catch {
      parsed = { type: 'unparseable', raw: data.join('\n') };
    }
    onEvent({ id, data: parsed, at });
  }
  return buf;
}

/**
 * Opens an SSE stream (GET, or POST with a JSON body) and hands every `data:`
 * event to onEvent with the arrival time of the bytes that completed it.
 * Rejects only if the response never starts; a non-200 resolves with its status
 * and the body is discarded.
 */
export function openSse(
  t: HttpTarget,
  method: 'GET' | 'POST',
  path: string,
  json: unknown,
  onEvent: (ev: SseEvent) => void,
  call: CallOptions = {},
): Promise<SseStream> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const headers = headersFor(t, body, call.key, { accept: 'text/event-stream' });
    const req = http.request(
      { host: t.base.hostname, port: t.base.port, method, path, agent: t.agent, headers },
      (res) => {
        const headersAt = performance.now();
        const done = new Promise<void>((resolveDone) => {
          res.on('end', resolveDone);
          res.on('close', resolveDone);
          res.on('error', () => resolveDone());
        });
        const stream = { status: res.statusCode ?? 0, headersAt, done, close: () => req.destroy() };
        if (res.statusCode !== 200) {
          res.resume();
          return resolve(stream);
        }
        res.setEncoding('utf8');
        let buf = '';
        // One timestamp per chunk, taken before any parsing, so parsing is not billed to the service.
        res.on('data', (chunk: string) => (buf = parseSseBlocks(buf + chunk, performance.now(), onEvent)));
        resolve(stream);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `count` jobs with at most `concurrency` in flight (a closed loop of clients). */
export async function closedLoop(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await job(next++);
  });
  await Promise.all(lanes);
}

// ---- CPU and memory from /proc --------------------------------------------------------

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
    await sleep(500);
    const cores = (busy() - a) / 0.5;
    const waitedMs = Date.now() - t0;
    if (cores < 0.05) return { quiet: true, cores, waitedMs };
    if (waitedMs >= 15_000) return { quiet: false, cores, waitedMs };
  }
}

// ---- probes ---------------------------------------------------------------------------

/**
 * Milliseconds a fixed single-threaded workload takes (JSON round trips of a
 * task-result-sized document), best of five. On a shared virtual machine the
 * same code runs markedly slower in some runs than in others with no CPU
 * showing as used elsewhere; this figure tells a slow machine from a slow change.
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
 * mark-compact). The flag exposes `gc` to contexts created after it is set.
 */
export function collectOwnGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

// ---- the profiler preload -------------------------------------------------------------

// `--profile DIR` preloads this file into the gateway, worker and engine (NODE_OPTIONS=--require,
// since Node refuses --cpu-prof there; see stackEnv): it loads nothing but Node's own modules and
// the statistics, so the profiled processes carry no more of the bench than the profiler. With
// PROFILE_ENV naming a folder, the V8 sampling profiler starts in-process and writes a
// .cpuprofile there when the process exits; report.ts summarises them.
export const PROFILE_ENV = 'BENCH_CPU_PROF_DIR';

function startProfiler(dir: string): void {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  let written = false;
  process.on('exit', () => {
    if (written) return;
    written = true;
    // The in-process inspector answers synchronously, so this completes inside an 'exit' handler.
    session.post('Profiler.stop', (err, res) => {
      if (err || !res) return;
      const name = (process.argv[1] ?? 'node')
        .split(path.sep)
        .slice(-2)
        .join('_')
        .replace(/[^A-Za-z0-9_-]/g, '_');
      fs.writeFileSync(
        path.join(dir, `CPU.${name}.${process.pid}.${threadId}.cpuprofile`),
        JSON.stringify(res.profile),
      );
    });
  });
}

if (process.env[PROFILE_ENV]) startProfiler(process.env[PROFILE_ENV]);

/** How many of the key's account's tasks have `status` (every page of GET /tasks). */
export async function countTasks(t: HttpTarget, status: string): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const r = await request(t, 'GET', `/tasks?status=${status}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    const page = JSON.parse(r.body) as { tasks: unknown[]; next_cursor?: string | null };
    n += page.tasks.length;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return n;
}

/** Whether any of the key's account's tasks has one of `statuses` (one page of one task each). */
export async function anyTasks(t: HttpTarget, ...statuses: string[]): Promise<boolean> {
  for (const status of statuses) {
    const r = await request(t, 'GET', `/tasks?status=${status}&limit=1`);
    if (r.status !== 200) throw new Error(`GET /tasks?status=${status} answered ${r.status}: ${r.body}`);
    if ((JSON.parse(r.body) as { tasks: unknown[] }).tasks.length) return true;
  }
  return false;
}
