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

/** One relayed token: when the model wrote it, its end-to-end time, and its two hops when the bench's watcher saw it. */
export interface TokenTiming {
  emitted: number;
  ms: number;
  workerMs?: number;
  gatewayMs?: number;
}

export interface HopSummaries {
  total: Summary;
  workerHop: Summary;
  gatewayHop: Summary;
}

/** The relay's figures split by whether a token was written within `windowMs` after some task's start. */
export interface RelaySplit {
  streams: number;
  nearStart: HopSummaries;
  otherwise: HopSummaries;
}

export function splitByStart(streams: number, tokens: TokenTiming[], startedAt: number[], windowMs: number): RelaySplit {
  const starts = [...startedAt].sort((a, b) => a - b);
  const near = (t: number) => {
    // The last start at or before t (binary search: a run has thousands of tokens).
    let lo = 0;
    let hi = starts.length - 1;
    let last = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= t) {
        last = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return last >= 0 && t - starts[last] <= windowMs;
  };
  const hops = (list: TokenTiming[]): HopSummaries => ({
    total: summarize(list.map((x) => x.ms)),
    workerHop: summarize(list.flatMap((x) => (x.workerMs === undefined ? [] : [x.workerMs]))),
    gatewayHop: summarize(list.flatMap((x) => (x.gatewayMs === undefined ? [] : [x.gatewayMs]))),
  });
  return { streams, nearStart: hops(tokens.filter((x) => near(x.emitted))), otherwise: hops(tokens.filter((x) => !near(x.emitted))) };
}
