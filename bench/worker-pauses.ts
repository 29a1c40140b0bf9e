// What held the worker's main thread during a phase: its garbage collections and its event loop's
// longest delay, from the worker's own Prometheus metrics (prom-client's default process metrics,
// served through the gateway's /metrics). A phase whose tail swings between runs reads these
// beside its rows: a pause here is a delay every call in flight took.
import type { Bench } from './stack';

interface Snapshot {
  /** Per GC kind: collections, seconds spent, and collections of at least 10 ms and 100 ms. */
  gc: Record<string, { count: number; sum: number; over10ms: number; over100ms: number }>;
  /** The event loop's longest delay since the previous read of the metrics (prom-client resets it), ms. */
  lagMaxMs?: number;
}

const GC = /^nodejs_gc_duration_seconds_(bucket|sum|count)\{([^}]*)\} ([\d.e+-]+)$/;

/** The worker's lines of the gateway's /metrics, read into a snapshot. */
export async function workerPauses(b: Bench): Promise<Snapshot | undefined> {
  const res = await fetch(`${b.gatewayUrl}/metrics`).catch(() => undefined);
  if (!res?.ok) return undefined;
  const snap: Snapshot = { gc: {} };
  for (const line of (await res.text()).split('\n')) {
    if (!line.includes('process="worker"')) continue;
    const lag = /^nodejs_eventloop_lag_max_seconds\{[^}]*\} ([\d.e+-]+)$/.exec(line);
    if (lag) snap.lagMaxMs = Number(lag[1]) * 1000;
    const m = GC.exec(line);
    if (!m) continue;
    const kind = /kind="([^"]+)"/.exec(m[2])?.[1] ?? '?';
    const k = (snap.gc[kind] ??= { count: 0, sum: 0, over10ms: 0, over100ms: 0 });
    const value = Number(m[3]);
    const le = /le="([^"]+)"/.exec(m[2])?.[1];
    if (m[1] === 'sum') k.sum = value;
    else if (m[1] === 'count') k.count = value;
    // Cumulative buckets: those above a bound are the count less the bucket at it.
    else if (le === '0.01') k.over10ms = -value;
    else if (le === '0.1') k.over100ms = -value;
  }
  for (const k of Object.values(snap.gc)) {
    k.over10ms += k.count;
    k.over100ms += k.count;
  }
  return snap;
}

/** One line: each GC kind's collections between the two snapshots, and the loop's longest delay at the second. */
export function pausesBetween(before: Snapshot | undefined, after: Snapshot | undefined): string {
  if (!before || !after) return "worker pauses: the worker's metrics were not readable";
  const kinds = Object.entries(after.gc).map(([kind, a]) => {
    const b = before.gc[kind] ?? { count: 0, sum: 0, over10ms: 0, over100ms: 0 };
    const n = a.count - b.count;
    const ms = ((a.sum - b.sum) * 1000).toFixed(0);
    return `${kind} ${n} (${ms} ms; >=10 ms ${a.over10ms - b.over10ms}, >=100 ms ${a.over100ms - b.over100ms})`;
  });
  const lag = after.lagMaxMs === undefined ? '?' : after.lagMaxMs.toFixed(1);
  return `worker main thread: GC ${kinds.join(', ')}; event loop's longest delay ${lag} ms`;
}
