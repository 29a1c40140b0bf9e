// The report of `npm run bench`: the targets, the table with verdicts, the
// targets judged against floors measured in the same run, CPU per request and
// per task, the submit bursts, the relay splits, the load phase (load.ts prints
// its table), the method notes, and with `--profile` each process's busiest
// functions during the rows that missed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallFrame, CpuProfile } from '../packages/embedded-temporal/bench/bench-profile';
import { loadTable, type LoadResult } from './load';
import type { BenchOptions } from './main';
import { fmtMs, monotonicUs, summarize, Summary, table } from './measure';
import type { HopSummaries, RelaySplit } from './relay';

/** The absolute targets (p99, ms); MCP, DAG and the bash tool call are judged against floors instead (FLOOR_RATIO). */
export const TARGETS = {
  submit: 20,
  status: 5,
  statusUnderLoad: 10,
  statusSaturated: 50,
  result: 10,
  relay: 5,
  datastore: 10,
} as const;
/** GET /healthz sent by the measuring client before the first phase (about a second). */
export const CLIENT_WARMUP = 3000;
/** Other processes' CPU (cores) above which a row's tails are not to be trusted. */
export const NOISY_CORES = 0.15;
/** How long a task's start-up work (submit, workflow start, session, first activities) keeps the worker busy, roughly. */
export const START_BURST_MS = 250;
/** The service's relay rows, and the bare relay measured right after each. */
export const RELAY_LABEL = 'token relay: model write -> SSE client read';
export const BARE_RELAY_LABEL = 'baseline: bare relay (HTTP -> PUBLISH -> SSE, own processes)';
/** A target stated against a floor: the row's p99 may be at most this many times the floor's. */
export const FLOOR_RATIO = 1.5;

export interface Row {
  label: string;
  concurrency: string;
  s: Summary;
  errors: number;
  targetP99?: number;
  /** The target is FLOOR_RATIO times the p99 of this floor row, measured in the same phase. */
  floor?: Row;
  /** Cores used by processes outside the bench and its stack meanwhile (noise). */
  otherCores?: number;
  /** When it was measured (monotonic µs), to cut the profiles to it. */
  window?: { fromUs: number; toUs: number };
  /** CPU ms each stack process used per measured request (the work a request costs, wherever it lands). */
  cpuPerRequest?: Record<string, number>;
}

/** A row of samples, with no target unless `extra` gives one. */
export const rowOf = (label: string, concurrency: string, samples: number[], extra: Partial<Row> = {}): Row => ({
  label,
  concurrency,
  s: summarize(samples),
  errors: 0,
  ...extra,
});

/** Judges `row` against `floor`: its target becomes FLOOR_RATIO times the floor's p99. */
export function judgeAgainstFloor(row: Row, floor: Row): Row {
  const targetP99 = floor.s.count ? Math.round(FLOOR_RATIO * floor.s.p99 * 100) / 100 : undefined;
  return { ...row, floor, targetP99 };
}

export interface Burst {
  clients: number;
  submitted: number;
  /** Seconds until the last 202, and until the last task ended. */
  acceptedS: number;
  ranS: number;
  finished: number;
}

export interface Report {
  opts: BenchOptions;
  /** The engine the stack ran on (and the floors with it). */
  engine: string;
  rows: Row[];
  taskCosts: Pick<Row, 'label' | 'concurrency' | 'cpuPerRequest'>[];
  bursts: Burst[];
  relaySplits: RelaySplit[];
  load?: LoadResult;
  otherCores: { run: number; load?: number };
  loadAvgAtStart: number[];
  probes: { start: number; end: number };
}

const noisy = (r: Row) => (r.otherCores ?? 0) >= NOISY_CORES;

function verdictOf(rows: Row[]): (r: Row) => string {
  const bareOf = (r: Row) =>
    r.label === RELAY_LABEL
      ? rows.find((b) => b.label === BARE_RELAY_LABEL && b.concurrency === r.concurrency && b.s.count > 0)
      : undefined;
  // A miss the bare relay shared: four wake-ups per token on these cores already cost more than the target in that run.
  const bareOver = (r: Row) =>
    r.s.p99 > r.targetP99! && (bareOf(r)?.s.p99 ?? 0) > r.targetP99! ? ' (bare relay too)' : '';
  return (r) =>
    r.targetP99 === undefined
      ? ''
      : r.s.count === 0
        ? 'NO DATA'
        : `${r.s.p99 <= r.targetP99 ? 'PASS' : 'MISS'}${noisy(r) ? ' (noisy)' : bareOver(r)}`;
}

function header(rep: Report): string[] {
  return [
    '',
    `== Agent Execution Service bench — ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, Node ${process.version} ==`,
    `stack: ${rep.engine} engine` +
      (rep.opts.persist
        ? ' with its durable log (fdatasync per commit), Redis with AOF (everysec), as `npm start` runs'
        : ' in memory, Redis without persistence, as the end-to-end tests run (--persist: as `npm start`)'),
    `load average at start ${rep.loadAvgAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `CPU speed probe (8,000 JSON round trips of a 1.5 KiB document, one thread, best of 5; compare between runs, lower is faster): ${rep.probes.start.toFixed(0)} ms before the run, ${rep.probes.end.toFixed(0)} ms after`,
    '',
  ];
}

function mainTable(rows: Row[]): string {
  const verdict = verdictOf(rows);
  const cells = (r: Row) => [
    r.label,
    r.concurrency,
    String(r.s.count),
    fmtMs(r.s.p50),
    fmtMs(r.s.p99),
    fmtMs(r.s.max),
    String(r.errors),
    r.otherCores === undefined ? '' : r.otherCores.toFixed(2),
    r.targetP99 === undefined ? '' : `<= ${r.targetP99} ms`,
    verdict(r),
  ];
  return table(
    [
      ['metric', 'clients', 'count', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'other CPU', 'target p99', 'verdict'],
      ...rows.map(cells),
    ],
    (c) => c > 1 && c < 8,
  );
}

/** The targets stated as ratios to a floor measured in the same run: floor, value, ratio, target, met. */
export function floorTable(rows: Row[], engine: string): string[] {
  const judged = rows.filter((r) => r.floor);
  if (!judged.length) return [];
  const line = (r: Row) => {
    const f = r.floor!;
    const ratio = r.s.p99 / f.s.p99;
    const met = r.s.count === 0 || f.s.count === 0 ? 'NO DATA' : ratio <= FLOOR_RATIO ? 'met' : 'not met';
    return [
      r.label,
      f.label,
      fmtMs(f.s.p99),
      fmtMs(r.s.p99),
      Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : '-',
      `<= ${FLOOR_RATIO}x`,
      `${met}${noisy(r) || noisy(f) ? ' (noisy)' : ''}`,
    ];
  };
  return [
    '',
    `Targets against floors measured in this run, on the same engine (${engine}): p99 of the row <= ${FLOOR_RATIO} x p99 of its floor.`,
    table(
      [['metric', 'floor', 'floor p99 ms', 'p99 ms', 'ratio', 'target', 'verdict'], ...judged.map(line)],
      (c) => c > 1 && c < 6,
    ),
  ];
}

function cpuTables(rep: Report): string[] {
  const costed = [...rep.rows.filter((r) => r.cpuPerRequest), ...rep.taskCosts];
  const out: string[] = [];
  if (costed.length) {
    const procs = ['gateway', 'engine', 'worker', 'redis', 'baseline'];
    const cell = (r: (typeof costed)[number], p: string) =>
      r.cpuPerRequest![p] === undefined ? '' : r.cpuPerRequest![p].toFixed(2);
    out.push(
      '',
      'CPU ms per request, by process (/proc utime+stime over the row / requests; 10 ms ticks). A submit row leaves most of its tasks\' work to after the row: "one background task" counts from the row\'s start until its tasks have finished and the stack is quiet:',
      table(
        [
          ['metric', 'clients', ...procs],
          ...costed.map((r) => [r.label, r.concurrency, ...procs.map((p) => cell(r, p))]),
        ],
        (c) => c > 1,
      ),
    );
  }
  for (const b of rep.bursts) {
    out.push(
      `submit burst @${b.clients}: ${b.submitted} tasks accepted in ${b.acceptedS.toFixed(1)} s (${(b.submitted / b.acceptedS).toFixed(0)}/s); ` +
        `${b.finished} ran to their end in ${b.ranS.toFixed(1)} s (${(b.finished / b.ranS).toFixed(1)} tasks/s: the most a steady submit rate can sustain)`,
    );
  }
  return out;
}

function relayLines(rep: Report): string[] {
  const hops = (h: HopSummaries) =>
    `p50/p99 ${fmtMs(h.total.p50)}/${fmtMs(h.total.p99)} ms (n=${h.total.count}` +
    (h.workerHop.count > 0
      ? `; p99 of the worker hop ${fmtMs(h.workerHop.p99)}, of the gateway hop ${fmtMs(h.gatewayHop.p99)})`
      : ')');
  const out = rep.relaySplits.map(
    (r) =>
      `token relay @${r.streams}: tokens emitted within ${START_BURST_MS} ms after a task start ${hops(r.nearStart)}, other tokens ${hops(r.otherwise)}`,
  );
  for (const r of rep.rows.filter((x) => x.label === RELAY_LABEL)) {
    const b = rep.rows.find((x) => x.label === BARE_RELAY_LABEL && x.concurrency === r.concurrency && x.s.count > 0);
    if (!b) continue;
    out.push(
      `token relay @${r.concurrency} against the bare relay right after it: p50 ${fmtMs(r.s.p50)} / ${fmtMs(b.s.p50)} ms, p99 ${fmtMs(r.s.p99)} / ${fmtMs(b.s.p99)} ms, ` +
        `max ${fmtMs(r.s.max)} / ${fmtMs(b.s.max)} ms (service / bare)`,
    );
  }
  return out;
}

function methodNotes(rep: Report): string[] {
  const { opts } = rep;
  return [
    '',
    `Other CPU: cores busy in processes outside this bench and its stack (from /proc/stat) during each row; whole run: ${rep.otherCores.run.toFixed(2)}.`,
    `  From ${NOISY_CORES} on (verdict "(noisy)"), another workload shared the two cores and the tails are not the service's alone: rerun.`,
    '',
    'Method (docs/benchmarks.md says more):',
    `- Latency rows: closed loops of N clients (the clients column; ${opts.concurrency.join(' and ')}), no think time, keep-alive node:http,`,
    `  timed from the call to the last body byte by a measuring client in a process of its own (bench/servers.ts, warmed with`,
    `  ${CLIENT_WARMUP} requests), after unmeasured requests through the same code (${opts.warmupReads} before a read row, ${opts.warmup} before a submit`,
    '  row). A row starts once engine, worker, gateway and redis used under 0.05 cores for 0.5 s (the log says when not).',
    '- Submit is judged at steady rates (open loop); the closed-loop rows are bursts, a backlog of tasks, with no target.',
    `- Status under load: paced reads of ${opts.statusLoadTasks} running tasks beside the baseline server read at the same rate (target 10 ms),`,
    '  then 8 clients closed loop (50 ms). Result first read goes to Temporal and fills the cache; repeat reads the cache.',
    '- Token relay: model write (onTokenWritten) -> SSE client read, one clock (this process). Right after each relay row',
    '  the same tokens go through a bare relay of two processes (bench/servers.ts: node:http read -> PUBLISH -> Express SSE).',
    '- Baseline: bench/servers.ts baseline, its own Node process: Express, one ioredis GET on the same redis-server, res.json.',
    "- MCP tool call: (tools/call at the server - the model's last tool-call delta) + (next model request - the server's",
    '  answer), 20 sequential calls a run. Floor: a bare SDK workflow on the same engine (bench/floor-workflows.ts, its own',
    '  worker process) running the same pattern with activities that return at once; per round, the two activity hand-offs.',
    "- DAG step scheduling: a step's first model request - the latest close of its dependencies' step workflows (describe).",
    "  Floor: a bare chain of child workflows on the same engine: child closed (describe) -> the next child's activity started.",
    '- Datastore named query: callMs - queryMs of the callDatastore activity (its result in history). Target p99 10 ms.',
    '- web_fetch: the runWebTool activity, started -> completed in history, minus a direct fetch of the same local page',
    '  by the bench right after (GET and body; the activity adds the policy checks, readable markdown and the relay).',
    '- browser_navigate: the runBrowserTool activity, started -> completed in history (navigation, load, the page snapshot',
    "  answered), one session's context reused; the first run (Chromium's launch) not measured.",
    "- bash tool call: the stamp `date +%s%N` prints as its process starts in the sandbox - the model's tool-call message",
    '  (one realtime clock), 20 calls a run; then as many spawns of it through createLocalSandbox() and a bare bwrap, paced',
    "  as the run's calls, and floor rounds. Target: p99 <= 1.5 x (bare sandbox p99 + one activity round p99).",
    '- Load: tasks submitted by --load-concurrency clients, SSE clients on some; ends from a Redis pattern subscription;',
    '  memory from /proc/<pid>/status.',
  ];
}

export function printReport(rep: Report): void {
  const out = [
    ...header(rep),
    mainTable(rep.rows),
    ...floorTable(rep.rows, rep.engine),
    ...cpuTables(rep),
    ...relayLines(rep),
    ...(rep.load ? loadTable(rep.load, rep.opts, rep.otherCores.load) : []),
    ...methodNotes(rep),
  ];
  console.log(out.join('\n'));
}

// ---- CPU profiles (--profile) ---------------------------------------------------------

type Window = NonNullable<Row['window']>;

export interface ProfileSummary {
  /** Wall time covered by the profile, and the part of it not idle, ms. */
  totalMs: number;
  busyMs: number;
  top: { name: string; where: string; selfMs: number; pct: number }[];
  groups: { group: string; pct: number }[];
  /** Runs of consecutive garbage-collector samples: an estimate of GC pauses, longest first (ms). */
  gcPausesMs: number[];
}

const ROOT = path.resolve(__dirname, '..');
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
