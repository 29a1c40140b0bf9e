// The status-under-load row: GET /tasks/{id} of tasks that are running and
// completing around the reads (issue 35: p99 reached 53 ms while 100 background
// tasks completed; the SPEC wants status checks under 50 ms, the target here is
// 10 ms). The tasks are submitted first (background, 8 clients), then their
// statuses are read while they run, their ends (status written, run closed, a
// read that confirms the close) landing among the reads. Two read patterns,
// each over its own 100 tasks: paced (open loop, each task polled about twice a
// second, as clients poll: the row the 10 ms target is judged on) and
// saturating (8 clients in a closed loop, some 1,500 reads a second, more than
// the two cores' gateway share serves: queueing, judged on the SPEC's 50 ms).
// Beside the paced reads, the same rate of reads of the bench's baseline server
// (bare Express and one Redis GET, a process of its own) under the same load:
// what a read costs on these cores while the tasks run, whatever serves it.
import { performance } from 'node:perf_hooks';
import type { BenchClient } from './bench-client-host';
import type { RequestSpec } from './bench-client';
import type { RelayWatcher } from './bench-watch';
import { monotonicUs } from './bench-profile';

/** Reads per task, closed loop: enough that the reads outlast the tasks (about 3 s at 8 clients on two cores). */
const READS_PER_TASK = 80;
/** Paced: each task read twice a second for 8 s (the tasks take about 10 s, ten at a time). */
const PACED_PER_TASK_S = 2;
const PACED_S = 8;
/** One task: a streamed answer of 40 tokens 20 ms apart, so the tasks run for seconds, not milliseconds. */
const TASK_MESSAGE = '[[slow delay=20 tokens=40]] status load';

export interface StatusLoadResult {
  tasks: number;
  /** Reads a second when paced, else undefined (closed loop). */
  rate?: number;
  reads: number;
  lat: number[];
  errors: number;
  /** Paced only: the baseline server's reads at the same rate, at the same time. */
  baseline?: { lat: number[]; errors: number };
  /** Tasks whose end came while the reads ran. */
  completedDuring: number;
  ms: number;
  fromUs: number;
}

/** `paced`: reads at a steady rate (open loop); otherwise 8 clients in a closed loop. */
export async function runStatusLoad(o: { client: BenchClient; base: string; key: string; tasks: number; paced: boolean; baselineUrl?: string; watcher: RelayWatcher; log: (s: string) => void }): Promise<StatusLoadResult> {
  const submits: RequestSpec[] = Array.from({ length: o.tasks }, (_, i) => ({ method: 'POST', path: '/', body: { message: `${TASK_MESSAGE} ${i}`, background: true } }));
  const sub = await o.client.run({ base: o.base, key: o.key, concurrency: 8, warmup: [], requests: submits, keepBodies: true });
  const ids = (sub.bodies ?? []).flatMap((b, i) => (sub.status[i] === 202 ? [(JSON.parse(b) as { task_id: string }).task_id] : []));
  const rate = o.paced ? ids.length * PACED_PER_TASK_S : undefined;
  const count = rate ? rate * PACED_S : ids.length * READS_PER_TASK;
  const reads: RequestSpec[] = Array.from({ length: count }, (_, i) => ({ method: 'GET', path: `/tasks/${ids[i % ids.length]}` }));
  const t0 = performance.now();
  const fromUs = monotonicUs();
  const bare = rate && o.baselineUrl ? o.client.run({ base: o.baselineUrl, key: null, concurrency: 8, rate, warmup: [], requests: reads.map(() => ({ method: 'GET', path: '/get' })) }) : undefined;
  const r = await o.client.run({ base: o.base, key: o.key, concurrency: 8, rate, warmup: [], requests: reads, keepBodies: true });
  const b = bare ? await bare : undefined;
  const baselineLat = b?.ms.filter((ms, i) => b.status[i] === 200 && Number.isFinite(ms));
  const baseline = b && baselineLat && { lat: baselineLat, errors: b.ms.length - baselineLat.length };
  if (process.env.BENCH_STATUS_LOAD_DEBUG) {
    const slow: Record<string, number> = {};
    const seenDone = new Set<string>();
    r.ms.forEach((ms, i) => {
      const body = JSON.parse(r.bodies![i]) as { status: string; task_id: string };
      const first = body.status === 'completed' && !seenDone.has(body.task_id);
      if (body.status === 'completed') seenDone.add(body.task_id);
      if (ms > 10) slow[`${body.status}${first ? ' (first completed read)' : ''}`] = (slow[`${body.status}${first ? ' (first completed read)' : ''}`] ?? 0) + 1;
    });
    const inServer = r.ms.flatMap((ms, i) => (ms > 10 ? [Number(/total;dur=([\d.]+)/.exec(r.serverTiming?.[i] ?? '')?.[1] ?? NaN)] : [])).sort((a, b) => a - b);
    o.log(`status-load: reads over 10 ms by status: ${JSON.stringify(slow)}; their time in the gateway (Server-Timing total) p50 ${inServer[Math.floor(inServer.length / 2)]} ms, p90 ${inServer[Math.floor(inServer.length * 0.9)]} ms`);
  }
  const t1 = performance.now();
  const completedDuring = ids.filter((id) => {
    const e = o.watcher.ended.get(id);
    return e !== undefined && e.at >= t0 && e.at <= t1;
  }).length;
  const lat: number[] = [];
  let errors = 0;
  r.ms.forEach((ms, i) => (r.status[i] === 200 && Number.isFinite(ms) ? lat.push(ms) : errors++));
  const missing = await o.watcher.waitAll(ids, 120_000);
  if (missing.length) o.log(`status-load: ${missing.length} tasks did not finish`);
  o.log(`status-load: ${reads.length} reads in ${((t1 - t0) / 1000).toFixed(1)} s while ${completedDuring} of ${ids.length} tasks completed`);
  return { tasks: ids.length, rate, baseline, reads: reads.length, lat, errors, completedDuring, ms: t1 - t0, fromUs };
}
