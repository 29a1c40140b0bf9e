// `npm run bench -- --profile DIR`: where the stack's CPU went.
//
// Preloaded into the gateway, worker and engine (NODE_OPTIONS=--require, since
// Node refuses --cpu-prof there; see stackEnv), this file starts the V8 sampling
// profiler in-process and writes a .cpuprofile when the process exits: only when
// PROFILE_ENV names a folder. In the bench process it summarises those profiles:
// self time by function and by where the code lives (project file, npm package,
// Node internals, GC, idle), cut to the time window of each row that missed.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { fmtMs, monotonicUs, table } from './measure';
import type { Row } from './report';

export const PROFILE_ENV = 'BENCH_CPU_PROF_DIR';
const ROOT = path.resolve(__dirname, '..');

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

interface Window {
  fromUs: number;
  toUs: number;
}

export interface ProfileSummary {
  /** Wall time covered by the profile, and the part of it not idle, ms. */
  totalMs: number;
  busyMs: number;
  top: { name: string; where: string; selfMs: number; pct: number }[];
  groups: { group: string; pct: number }[];
  /** Runs of consecutive garbage-collector samples: an estimate of GC pauses, longest first (ms). */
  gcPausesMs: number[];
}

const shortUrl = (url: string) => url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');

function groupOf(frame: CallFrame): string {
  const name = frame.functionName;
  if (name === '(idle)' || name === '(garbage collector)') return name;
  if (name === '(program)') return '(program: V8/native, unattributed)';
  const u = shortUrl(frame.url);
  if (!u) return '(native / builtins)';
  if (u.startsWith('node:')) return `node: ${u.slice(5).split('/')[0]}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  return nm ? `npm: ${nm[1]}` : `project: ${u.split('/').slice(0, 2).join('/')}`;
}

/** Self time (µs) per node over the samples inside `window`, and the GC pauses among them. */
function selfTimes(prof: CpuProfile, window: Window): { selfUs: Map<number, number>; gcPausesMs: number[] } {
  const gcNode = new Set(prof.nodes.filter((n) => n.callFrame.functionName === '(garbage collector)').map((n) => n.id));
  const selfUs = new Map<number, number>();
  const gcPausesMs: number[] = [];
  let gcRun = 0;
  // timeDeltas[i] is the gap before sample i; charging it to sample i is how DevTools computes self time.
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    const d = prof.timeDeltas[i] ?? 0;
    t += d;
    if (t < window.fromUs || t > window.toUs) continue;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + d);
    if (gcNode.has(prof.samples[i])) gcRun += prof.timeDeltas[i + 1] ?? 0;
    else if (gcRun > 0) {
      gcPausesMs.push(gcRun / 1000);
      gcRun = 0;
    }
  }
  if (gcRun > 0) gcPausesMs.push(gcRun / 1000);
  return { selfUs, gcPausesMs: gcPausesMs.sort((a, b) => b - a) };
}

/** Self time per function and per area over the samples taken inside `window` (monotonic µs). */
export function summarizeProfile(prof: CpuProfile, window: Window, topN: number): ProfileSummary {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const { selfUs, gcPausesMs } = selfTimes(prof, window);
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const groups = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)?.callFrame;
    if (!f) continue;
    totalUs += us;
    if (f.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    groups.set(groupOf(f), (groups.get(groupOf(f)) ?? 0) + us);
    // Project files are compiled on load: their line numbers would mislead, so name the file only.
    const short = shortUrl(f.url);
    const where = !f.url
      ? ''
      : short.includes('node_modules/') || short.startsWith('node:')
        ? `${short}:${f.lineNumber + 1}`
        : short;
    const cur = fn.get(`${f.functionName}|${where}`) ?? { name: f.functionName || '(anonymous)', where, us: 0 };
    cur.us += us;
    fn.set(`${f.functionName}|${where}`, cur);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  const top = [...fn.values()].sort((a, b) => b.us - a.us).slice(0, topN);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    top: top.map((x) => ({ name: x.name, where: x.where, selfMs: x.us / 1000, pct: pct(x.us) })),
    groups: [...groups.entries()].sort((a, b) => b[1] - a[1]).map(([group, us]) => ({ group, pct: pct(us) })),
    gcPausesMs,
  };
}

/** The main-thread profiles (thread id 0: where requests queue) of the named processes. */
function mainThreadProfiles(
  dir: string,
  pids: Record<string, number | undefined>,
): { name: string; prof: CpuProfile }[] {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.0.cpuprofile')) : [];
  return Object.entries(pids).flatMap(([name, pid]) =>
    files
      .filter((f) => pid && f.split('.').includes(String(pid)))
      .map((f) => ({ name, prof: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile })),
  );
}

/** For every row that missed its target, each process's main thread in that row's window; then the whole run. */
export function printProfiles(dir: string, pids: Record<string, number | undefined>, rows: Row[], whole: Window): void {
  const profiles = mainThreadProfiles(dir, pids);
  if (profiles.length === 0) return console.log(`\nno CPU profiles found in ${dir}`);
  const sections = rows
    .filter((r) => r.window && r.targetP99 !== undefined && r.s.count > 0 && r.s.p99 > r.targetP99)
    .map((r) => ({
      title: `${r.label} @${r.concurrency} (p99 ${fmtMs(r.s.p99)} ms, target ${r.targetP99} ms)`,
      window: r.window!,
      topN: 8,
    }));
  sections.push({ title: 'whole measured run', window: whole, topN: 15 });
  for (const sec of sections) {
    const wallS = (Math.min(sec.window.toUs, monotonicUs()) - sec.window.fromUs) / 1e6;
    console.log(`\n== CPU profile: ${sec.title}, ${wallS.toFixed(1)} s ==`);
    for (const p of profiles) {
      const sum = summarizeProfile(p.prof, sec.window, sec.topN);
      const gc = sum.gcPausesMs;
      console.log(
        `\n${p.name} main thread: busy ${sum.busyMs.toFixed(0)} ms of ${sum.totalMs.toFixed(0)} ms sampled (${((100 * sum.busyMs) / Math.max(1, sum.totalMs)).toFixed(0)}% of a core)`,
      );
      console.log(
        '  areas: ' +
          sum.groups
            .slice(0, 6)
            .map((g) => `${g.group} ${g.pct.toFixed(0)}%`)
            .join(', '),
      );
      console.log(
        `  GC pauses (from samples): ${gc.length}, ${gc.filter((x) => x >= 5).length} of >= 5 ms, longest ${
          gc
            .slice(0, 5)
            .map((x) => x.toFixed(1))
            .join(', ') || '-'
        } ms`,
      );
      console.log(
        table(
          [
            ['  top self time', 'where', 'ms', '%'],
            ...sum.top.map((t) => [`  ${t.name}`, t.where, t.selfMs.toFixed(0), t.pct.toFixed(1)]),
          ],
          (c) => c > 1,
        ),
      );
    }
  }
  console.log(`\n(profiles: ${dir})`);
}
