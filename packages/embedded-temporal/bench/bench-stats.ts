// Statistics of the engine's benches (bench-compaction.ts): nearest-rank percentiles over the raw
// samples. The repository's bench (bench/measure.ts) re-exports
// these: the package stands on its own, the service may depend on it.

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
  return {
    count: s.length,
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    max: s.length ? s[s.length - 1] : NaN,
    mean,
  };
}

export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
