// Printing the bench's results: the per-case table, the flatness run's checkpoint rows
// and its growth summary.
import type { CaseResult, FlatSample } from './bench-devserver-cases';

export const FLAT_WIDTHS = [7, 10, 17, 9, 13, 9, 13, 8];

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function formatFlat(s: FlatSample): string[] {
  return [String(s.completed), fmt(s.seconds), fmt(s.segmentPerSecond, 0), fmt(s.rssMiB), fmt(s.peakRssMiB), fmt(s.heapMiB), fmt(s.externalMiB), fmt(s.dbMiB, 2)];
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

export function printCases(results: CaseResult[]): void {
  const header = ['persistence', 'conc', 'done', 'wf/s', 'p50 ms', 'p99 ms', 'max ms', 'RSS start MiB', 'RSS end MiB', 'peak RSS MiB', 'heap after GC MiB', 'server CPU ms/wf', 'bench CPU ms/wf', 'cores server/bench/other', 'ELU server/bench', 'db MiB', 'note'];
  const rows = results.map((r) => [
    r.mode === 'file' ? 'file (fsync)' : 'memory',
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
  console.log('  cores = average CPU cores busy during the case (server process; bench = client + worker; other = rest of the machine).');
  console.log('  ELU = event-loop utilisation of the server JS thread / the bench main thread (near 1 = that thread is the bottleneck).');
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
  const per1000 = (pick: (s: FlatSample) => number) => slope(steady.map((s) => [s.completed / 1000, pick(s)])) ;
  const rssGrowth = per1000((s) => s.rssMiB);
  const heapGrowth = per1000((s) => s.heapMiB);
  const externalGrowth = per1000((s) => s.externalMiB);
  const rates = steady.map((s) => s.segmentPerSecond).filter(Number.isFinite);
  console.log(`  growth per 1,000 workflows (least squares over checkpoints >= ${2 * step}): RSS ${fmt(rssGrowth, 2)} MiB, heap ${fmt(heapGrowth, 2)} MiB, external ${fmt(externalGrowth, 2)} MiB`);
  if (rates.length > 1) console.log(`  throughput per step: first ${fmt(rates[0], 0)} wf/s, last ${fmt(rates[rates.length - 1], 0)} wf/s`);
  // "Flat" = retained heap grows by less than 1 MiB per 1,000 workflows once warm.
  const flat = Number.isFinite(heapGrowth) && heapGrowth < 1;
  console.log(`  verdict: memory ${flat ? 'FLAT' : 'GROWS'} (target: heap growth < 1 MiB per 1,000 workflows)`);
}
