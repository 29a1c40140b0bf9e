// The bench's relay phase: at each stream count, the service's token relay row
// (measureRelayRow through the gateway), then the same row through the bare
// relay (bench-bare-relay.ts), each after a quiet stack and a collection of this
// process's heap. See bench.ts for where its rows go.
import { target } from './bench-http';
import type { BenchOptions } from './bench-options';
import { collectOwnGarbage, CpuMeter, waitQuiet } from './bench-proc';
import { monotonicUs } from './bench-profile';
import { BareRelay, startBareRelay } from './bench-bare-relay';
import { LOOP_DELAY_RESOLUTION_MS, measureRelayRow, RelayRowSamples } from './bench-relay';
import { BARE_RELAY_LABEL, RELAY_LABEL, Row, START_BURST_MS } from './bench-report';
import { fmtMs, RelaySplit, splitByStart, summarize } from './bench-stats';
import type { RelayWatcher } from './bench-watch';

export interface RelayPhaseInput {
  opts: BenchOptions;
  /** Stream counts, ascending. */
  levels: number[];
  gatewayUrl: string;
  /** The bench account's key. */
  apiKey: string;
  redisUrl: string;
  modelUrl: string;
  env: NodeJS.ProcessEnv;
  emittedAt: ReadonlyMap<string, number>;
  watcher: RelayWatcher;
  cpu: CpuMeter;
  /** The stack's processes, for the quiet wait before each row. */
  stackPids: () => (number | undefined)[];
  left: () => number;
  log: (line: string) => void;
  /** Told of the bare relay as soon as it runs, so an interrupted run can stop it. */
  started: (bare: BareRelay) => void;
  targetP99: number;
}

export async function runRelayPhase(inp: RelayPhaseInput): Promise<{ rows: Row[]; splits: RelaySplit[] }> {
  const { opts, log, left } = inp;
  const rows: Row[] = [];
  const splits: RelaySplit[] = [];
  const maxC = inp.levels[inp.levels.length - 1];
  let counter = 0;
  const nextToken = () => `z${(counter++).toString(36).padStart(5, '0')}`;
  // The relay streams end on their own (the client reads them to the end),
  // so the watcher is needed only for the hop split. Unsubscribed, it is
  // not an extra subscriber for Redis to write to, nor an extra wake-up of
  // this process per event: in four alternating pairs of relay-only runs
  // (session 12) p50 at 8 streams was 0.61-0.87 ms without it against
  // 0.85-1.00 with it, p99 5.17-5.30 against 5.19-6.49 ms.
  if (!opts.relayHops) await inp.watcher.pause();
  const bare = await startBareRelay(inp.redisUrl, inp.modelUrl, inp.env);
  inp.started(bare);
  const quietPids = () => [...inp.stackPids(), ...bare.children.map((c) => c.pid)];
  // Unmeasured: the bare relay's processes optimise their code on their first tokens, which the
  // service's did in the phases before (in its first full runs its one-stream row measured
  // p99 6.2-6.8 ms against 3.6-3.8 for the service's, the other way round from 8 streams).
  await measureRelayRow({
    api: target(bare.url, null, maxC),
    streams: maxC,
    tasks: 2 * maxC,
    opts: { ...opts, relayDelayMs: 1 },
    emittedAt: inp.emittedAt,
    watcher: inp.watcher,
    nextToken,
    left,
  });
  const row = async (C: number, tasks: number, base: string, key: string | null): Promise<{ r: RelayRowSamples; otherCores: number; window: Row['window'] }> => {
    // As before the other rows: the last phase's tasks finished first. And this process's own
    // heap collected, so its next major GC is not due during the row.
    const q = await waitQuiet(quietPids);
    if (!q.quiet) log(`relay @${C}: the stack did not settle (${q.cores.toFixed(2)} cores busy after ${(q.waitedMs / 1000).toFixed(1)} s); measuring anyway`);
    collectOwnGarbage();
    const m0 = inp.cpu.mark();
    const fromUs = monotonicUs();
    const r = await measureRelayRow({
      api: target(base, key, C),
      streams: C,
      tasks,
      opts,
      emittedAt: inp.emittedAt,
      watcher: inp.watcher,
      nextToken,
      left,
    });
    return { r, otherCores: CpuMeter.foreignCores(m0, inp.cpu.mark()), window: { fromUs, toUs: monotonicUs() } };
  };
  try {
    for (const C of inp.levels) {
      if (left() <= 0) break;
      const tasks = Math.max(3, Math.round((opts.relayTasks * C) / maxC));
      const streams = `${C} stream${C > 1 ? 's' : ''}`;
      const { r, otherCores, window } = await row(C, tasks, inp.gatewayUrl, inp.apiKey);
      const service: Row = { label: RELAY_LABEL, concurrency: streams, s: summarize(r.overhead), errors: r.errors, targetP99: inp.targetP99, otherCores, window };
      rows.push(service);
      if (opts.relayHops) {
        rows.push({ label: '  of which: model -> Redis pub/sub (worker hop)', concurrency: streams, s: summarize(r.workerHop), errors: 0, otherCores });
        rows.push({ label: '  of which: Redis pub/sub -> SSE client (gateway hop)', concurrency: streams, s: summarize(r.gatewayHop), errors: 0, otherCores });
      }
      // Token emission times next to task start times: tells whether the
      // tail comes from other tasks' start-up work (workflow tasks, the
      // session and slot activities) landing on the same worker.
      const split = splitByStart(C, r.tokenAt, r.postedAt, START_BURST_MS);
      splits.push(split);
      const { nearStart: near, otherwise: far } = split;
      log(
        `relay @${C}: ${r.overhead.length} tokens from ${tasks} tasks, p50=${fmtMs(service.s.p50)} ms p99=${fmtMs(service.s.p99)} ms, errors ${r.errors}; ` +
          `tokens within ${START_BURST_MS} ms after a task start: n=${near.total.count} p99=${fmtMs(near.total.p99)} ms, others: n=${far.total.count} p99=${fmtMs(far.total.p99)} ms; ` +
          `this process's event-loop delay p99 ${fmtMs(r.loopDelayP99Ms)} ms (over its ${LOOP_DELAY_RESOLUTION_MS} ms timer)`,
      );
      if (left() <= 0) break;
      const b = await row(C, tasks, bare.url, null);
      const baseline: Row = { label: BARE_RELAY_LABEL, concurrency: streams, s: summarize(b.r.overhead), errors: b.r.errors, otherCores: b.otherCores, window: b.window };
      rows.push(baseline);
      log(`bare relay @${C}: ${b.r.overhead.length} tokens, p50=${fmtMs(baseline.s.p50)} ms p99=${fmtMs(baseline.s.p99)} ms, errors ${b.r.errors}; this process's event-loop delay p99 ${fmtMs(b.r.loopDelayP99Ms)} ms`);
    }
  } finally {
    await bare.stop();
    if (!opts.relayHops) await inp.watcher.resume();
  }
  return { rows, splits };
}
