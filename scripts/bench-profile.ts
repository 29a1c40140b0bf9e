// Summaries of V8 .cpuprofile files (written by node --cpu-prof) for the
// bench's profile mode: top functions by self time, and self time grouped by
// where the code lives (project file, npm package, Node internals, GC, idle),
// which is usually enough to say which layer a latency goes to.
import fs from 'node:fs';
import path from 'node:path';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  /** Wall time covered by the profile, ms. */
  totalMs: number;
  /** Time not idle, ms. */
  busyMs: number;
  top: { name: string; where: string; selfMs: number; pct: number }[];
  groups: { group: string; selfMs: number; pct: number }[];
  /** Runs of consecutive garbage-collector samples: an estimate of GC pauses, longest first (ms). */
  gcPausesMs: number[];
}

const ROOT = path.resolve(__dirname, '..');

function shortUrl(url: string): string {
  let u = url.replace(/^file:\/\//, '');
  if (u.startsWith(ROOT + '/')) u = u.slice(ROOT.length + 1);
  return u;
}

function groupOf(frame: CallFrame): string {
  const name = frame.functionName;
  if (name === '(idle)') return '(idle)';
  if (name === '(garbage collector)') return '(garbage collector)';
  if (name === '(program)') return '(program: V8/native, unattributed)';
  const u = shortUrl(frame.url);
  if (!u) return '(native / builtins)';
  if (u.startsWith('node:')) return `node: ${u.slice(5).split('/')[0]}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  if (nm) return `npm: ${nm[1]}`;
  return `project: ${u.split('/').slice(0, 2).join('/')}`;
}

/** Microseconds on the monotonic clock, the one V8 stamps samples with (process.hrtime). */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function loadProfile(file: string): CpuProfile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
}

/**
 * Self time per function over the samples taken inside `window` (monotonic
 * µs, see monotonicUs), so start-up work (tsx compiling, the worker bundling
 * workflows) or other phases do not drown the one of interest.
 */
export function summarizeProfile(prof: CpuProfile, file: string, window?: { fromUs: number; toUs: number }, topN = 15): ProfileSummary {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the gap before sample i; charging it to sample i is how
  // Chrome DevTools computes self time.
  let t = prof.startTime;
  const gcPausesMs: number[] = [];
  let gcRun = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const d = prof.timeDeltas[i] ?? 0;
    t += d;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + d);
    // A sample stands for the time until the next one; a GC pause is a run of them.
    const isGc = byId.get(prof.samples[i])?.callFrame.functionName === '(garbage collector)';
    if (isGc) gcRun += prof.timeDeltas[i + 1] ?? 0;
    else if (gcRun > 0) {
      gcPausesMs.push(gcRun / 1000);
      gcRun = 0;
    }
  }
  if (gcRun > 0) gcPausesMs.push(gcRun / 1000);
  gcPausesMs.sort((a, b) => b - a);
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const groups = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    const f = node.callFrame;
    if (f.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const g = groupOf(f);
    groups.set(g, (groups.get(g) ?? 0) + us);
    // Project files run through tsx, so their line numbers are those of the
    // transpiled output and would mislead: name the file only.
    const short = shortUrl(f.url);
    const where = !f.url ? '' : short.includes('node_modules/') || short.startsWith('node:') ? `${short}:${f.lineNumber + 1}` : short;
    const key = `${f.functionName}|${where}`;
    const cur = fn.get(key) ?? { name: f.functionName || '(anonymous)', where, us: 0 };
    cur.us += us;
    fn.set(key, cur);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  return {
    file,
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    top: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((x) => ({ name: x.name, where: x.where, selfMs: x.us / 1000, pct: pct(x.us) })),
    groups: [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([group, us]) => ({ group, selfMs: us / 1000, pct: pct(us) })),
    gcPausesMs,
  };
}

/** The .cpuprofile files a process with this pid wrote into dir (its main thread and any worker threads). */
export function profilesOf(dir: string, pid: number): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile') && f.split('.').includes(String(pid)))
    .map((f) => path.join(dir, f));
}
