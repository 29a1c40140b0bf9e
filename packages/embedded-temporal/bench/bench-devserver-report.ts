// Printing the bench's results: the per-case table, the embedded engine against the real
// dev server, the flatness run's checkpoint rows and its growth summary.
import type { CaseResult, FlatSample } from './bench-devserver-cases';
import type { Mode } from './bench-devserver-options';

export const FLAT_WIDTHS = [7, 10, 17, 9, 13, 9, 13, 8];

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function formatFlat(s: FlatSample): string[] {
  return [
    String(s.completed),
    fmt(s.seconds),
    fmt(s.segmentPerSecond, 0),
    fmt(s.rssMiB),
    fmt(s.peakRssMiB),
    fmt(s.heapMiB),
    fmt(s.externalMiB),
    fmt(s.dbMiB, 2),
  ];
}

export function printRow(cells: string[], widths: number[]): void {
  console.log('  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  rows.forEach((r, i) => {
    printRow(r, widths);
    if (i === 0) console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  });
}

/** What "file" means differs: the embedded engine's fsynced log, the real server's SQLite file. */
function modeLabel(mode: Mode, engine?: string): string {
  if (mode === 'memory') return 'memory';
  return engine === 'embedded' ? 'file (fsync)' : engine === 'temporal-cli' ? 'file (sqlite)' : 'file';
}

export function printCases(results: CaseResult[]): void {
  const header = [
    'engine',
    'persistence',
    'conc',
    'done',
    'wf/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'RSS start MiB',
    'RSS end MiB',
    'peak RSS MiB',
    'heap after GC MiB',
    'server CPU ms/wf',
    'bench CPU ms/wf',
    'cores server/bench/other',
    'ELU server/bench',
    'db MiB',
    'note',
  ];
  const rows = results.map((r) => [
    r.engine,
    modeLabel(r.mode, r.engine),
    String(r.concurrency),
    `${r.completed}/${r.workflows}`,
    fmt(r.perSecond, 0),
    fmt(r.p50Ms),
    fmt(r.p99Ms),
    fmt(r.maxMs),
    fmt(r.rssStartMiB),
    fmt(r.rssEndMiB),
    fmt(r.peakRssMiB),
    fmt(r.heapAfterGcMiB),
    fmt(r.serverCpuMsPerWf, 2),
    fmt(r.benchCpuMsPerWf, 2),
    `${fmt(r.serverCores, 2)}/${fmt(r.benchCores, 2)}/${fmt(r.otherCores, 2)}`,
    `${fmt(r.serverElu, 2)}/${fmt(r.benchElu, 2)}`,
    r.mode === 'file' ? fmt(r.dbMiB, 2) : '-',
    r.note,
  ]);
  printTable([header, ...rows]);
  console.log(
    '  cores = average CPU cores busy during the case (server process; bench = client + worker; other = rest of the machine).',
  );
  console.log(
    '  ELU = event-loop utilisation of the server JS thread / the bench main thread (near 1 = that thread is the bottleneck).',
  );
  console.log('  The real server (temporal-cli, one Go process) has no heap or ELU probe: those read -.');
}

/** One figure of both engines; ratio = embedded / real (NaN when either is missing). */
export interface Pair {
  embedded: number;
  real: number;
  ratio: number;
}

export interface Comparison {
  mode: Mode;
  concurrency: number;
  perSecond: Pair;
  p50Ms: Pair;
  p99Ms: Pair;
  peakRssMiB: Pair;
}

/** Pairs each embedded case with the real server's case of the same mode and concurrency. */
export function compareEngines(results: CaseResult[]): Comparison[] {
  const find = (engine: string, mode: Mode, concurrency: number) =>
    results.find((r) => r.engine === engine && r.mode === mode && r.concurrency === concurrency);
  const keys = [...new Map(results.map((r) => [`${r.mode}/${r.concurrency}`, r])).values()];
  return keys.map(({ mode, concurrency }) => {
    const e = find('embedded', mode, concurrency);
    const t = find('temporal-cli', mode, concurrency);
    const pair = (pick: (r: CaseResult) => number): Pair => {
      const embedded = e ? pick(e) : NaN;
      const real = t ? pick(t) : NaN;
      return { embedded, real, ratio: embedded / real };
    };
    return {
      mode,
      concurrency,
      perSecond: pair((r) => r.perSecond),
      p50Ms: pair((r) => r.p50Ms),
      p99Ms: pair((r) => r.p99Ms),
      peakRssMiB: pair((r) => r.peakRssMiB),
    };
  });
}

export function comparisonRows(rows: Comparison[]): string[][] {
  const cells = (p: Pair, digits: number) => [`${fmt(p.embedded, digits)} / ${fmt(p.real, digits)}`, fmt(p.ratio, 2)];
  const header = [
    'persistence',
    'conc',
    'wf/s emb / real',
    'x',
    'p50 ms emb / real',
    'x',
    'p99 ms emb / real',
    'x',
    'peak RSS MiB emb / real',
    'x',
  ];
  return [
    header,
    ...rows.map((r) => [
      modeLabel(r.mode),
      String(r.concurrency),
      ...cells(r.perSecond, 0),
      ...cells(r.p50Ms, 1),
      ...cells(r.p99Ms, 1),
      ...cells(r.peakRssMiB, 0),
    ]),
  ];
}

export interface GoalVerdict {
  mode: Mode;
  /** Embedded throughput >= the real server's at every concurrency of the mode; undefined when a figure is missing. */
  met: boolean | undefined;
  line: string;
}

export function goalVerdicts(rows: Comparison[]): GoalVerdict[] {
  const modes = [...new Set(rows.map((r) => r.mode))];
  return modes.map((mode) => {
    const of = rows.filter((r) => r.mode === mode);
    const ratios = of.map((r) => r.perSecond.ratio);
    const met = ratios.every(Number.isFinite) ? ratios.every((x) => x >= 1) : undefined;
    const verdict = met === undefined ? 'UNKNOWN (a case is missing)' : met ? 'MET' : 'NOT MET';
    // The goal is set with persistence; the in-memory line is there to compare with.
    const scope = mode === 'file' ? 'goal' : 'for comparison, not the goal';
    const detail = of.map((r) => `conc ${r.concurrency} ${fmt(r.perSecond.ratio, 2)}x`).join(', ');
    return {
      mode,
      met,
      line: `embedded wf/s >= real, ${mode === 'file' ? 'persistence (file)' : 'memory'} (${scope}): ${detail} -> ${verdict}`,
    };
  });
}

export function printComparison(results: CaseResult[]): { rows: Comparison[]; goal: GoalVerdict[] } {
  const rows = compareEngines(results);
  const goal = goalVerdicts(rows);
  console.log(
    '\nembedded engine against the real dev server (temporal-cli); x = embedded / real (wf/s: above 1 is better; ms and MiB: below 1 is better)',
  );
  printTable(comparisonRows(rows));
  for (const g of goal) console.log(`  ${g.line}`);
  return { rows, goal };
}

/** Least-squares slope of y over x; how much a figure grows per unit of x. */
function slope(points: Array<[number, number]>): number {
  const pts = points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (pts.length < 2) return NaN;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of pts) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export function printFlatSummary(samples: FlatSample[], step: number): void {
  // From the second checkpoint on: the first step still includes JIT and cache warm-up.
  const steady = samples.filter((s) => s.completed >= 2 * step);
  const per1000 = (pick: (s: FlatSample) => number) => slope(steady.map((s) => [s.completed / 1000, pick(s)]));
  const rssGrowth = per1000((s) => s.rssMiB);
  const heapGrowth = per1000((s) => s.heapMiB);
  const externalGrowth = per1000((s) => s.externalMiB);
  const rates = steady.map((s) => s.segmentPerSecond).filter(Number.isFinite);
  console.log(
    `  growth per 1,000 workflows (least squares over checkpoints >= ${2 * step}): RSS ${fmt(rssGrowth, 2)} MiB, heap ${fmt(heapGrowth, 2)} MiB, external ${fmt(externalGrowth, 2)} MiB`,
  );
  if (rates.length > 1)
    console.log(`  throughput per step: first ${fmt(rates[0], 0)} wf/s, last ${fmt(rates[rates.length - 1], 0)} wf/s`);
  // "Flat" = retained heap grows by less than 1 MiB per 1,000 workflows once warm.
  const flat = Number.isFinite(heapGrowth) && heapGrowth < 1;
  console.log(`  verdict: memory ${flat ? 'FLAT' : 'GROWS'} (target: heap growth < 1 MiB per 1,000 workflows)`);
}
