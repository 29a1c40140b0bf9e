// The status-under-load row: GET /tasks/{id} of tasks that are running and
// completing around the reads (issue 35: p99 reached 53 ms while 100 background
// tasks completed; the SPEC wants status checks under 50 ms, the target here is
// 10 ms). The tasks are submitted first (background, 8 clients), then 8 clients
// read their statuses in a closed loop while they run, their ends (status
// written, run closed, a read that confirms the close) landing among the reads.
import { performance } from 'node:perf_hooks';
import type { BenchClient } from './bench-client-host';
import type { RequestSpec } from './bench-client';
import type { RelayWatcher } from './bench-watch';
import { monotonicUs } from './bench-profile';

/** Reads per task: enough that the reads outlast the tasks (about 3 s at 8 clients on two cores). */
const READS_PER_TASK = 80;
/** One task: a streamed answer of 40 tokens 20 ms apart, so the tasks run for seconds, not milliseconds. */
const TASK_MESSAGE = '[[slow delay=20 tokens=40]] status load';

export interface StatusLoadResult {
  tasks: number;
  reads: number;
  lat: number[];
  errors: number;
  /** Tasks whose end came while the reads ran. */
  completedDuring: number;
  ms: number;
  fromUs: number;
}

export async function runStatusLoad(o: { client: BenchClient; base: string; key: string; tasks: number; watcher: RelayWatcher; log: (s: string) => void }): Promise<StatusLoadResult> {
  const submits: RequestSpec[] = Array.from({ length: o.tasks }, (_, i) => ({ method: 'POST', path: '/', body: { message: `${TASK_MESSAGE} ${i}`, background: true } }));
  const sub = await o.client.run({ base: o.base, key: o.key, concurrency: 8, warmup: [], requests: submits, keepBodies: true });
  const ids = (sub.bodies ?? []).flatMap((b, i) => (sub.status[i] === 202 ? [(JSON.parse(b) as { task_id: string }).task_id] : []));
  const reads: RequestSpec[] = Array.from({ length: ids.length * READS_PER_TASK }, (_, i) => ({ method: 'GET', path: `/tasks/${ids[i % ids.length]}` }));
  const t0 = performance.now();
  const fromUs = monotonicUs();
  const r = await o.client.run({ base: o.base, key: o.key, concurrency: 8, warmup: [], requests: reads, keepBodies: true });
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
  return { tasks: ids.length, reads: reads.length, lat, errors, completedDuring, ms: t1 - t0, fromUs };
}
