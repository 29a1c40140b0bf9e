// Latency summaries for `npm run bench`: nearest-rank percentiles over the raw
// samples (no histograms: a few thousand samples fit in memory, and exact
// percentiles keep p99 honest at small counts).

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN;
  return { count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : NaN, mean };
}

export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

export function fmtMiB(kib: number | undefined): string {
  return kib === undefined ? '-' : `${(kib / 1024).toFixed(0)} MiB`;
}

/** Fixed-width text table; the first row is the header. */
export function table(rows: string[][], rightAlign: (col: number) => boolean = (c) => c > 0): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((cell, c) => (rightAlign(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ').trimEnd();
  const sep = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]), sep, ...rows.slice(1).map(line)].join('\n');
}
