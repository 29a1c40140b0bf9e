// The relay phase: at each stream count, the service's token relay row (each
// token timed from the model's write, in this process, to the SSE client's
// read, also in this process: one clock), then the same row through a bare
// relay of two processes of its own (bench/servers.ts bare-publisher and
// bare-sse) standing where the worker and the gateway stand. The bare relay's
// figures are what four process wake-ups per token cost on these cores with
// almost no work between them; what the service adds is the difference.
import type { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { BenchOptions } from './options';
import {
  closedLoop,
  collectOwnGarbage,
  fmtMs,
  HttpTarget,
  monotonicUs,
  openSse,
  summarize,
  Summary,
  target,
} from './measure';
import { BARE_RELAY_LABEL, RELAY_LABEL, Row, START_BURST_MS } from './report';
import { CpuMeter, RelayWatcher, spawnEntry, stopChild, waitForPort, waitQuiet } from './stack';

/** Relay tokens are 'z' + 5 base-36 digits: unique, and one scripted-model token each (<= 6 characters). */
export const RELAY_TOKEN = /^z[0-9a-z]{5}$/;
/** Sampling period of a row's event-loop delay monitor (a 1 ms timer woke this process a thousand times a second). */
const LOOP_DELAY_RESOLUTION_MS = 10;

// ---- the bare relay ---------------------------------------------------------------

export interface BareRelay {
  /** Base URL of its SSE server (POST / with {message}). */
  url: string;
  readonly children: ChildProcess[];
  stop(): Promise<void>;
}

/** Starts the publisher, then the SSE server that calls it; both stop with stop(). */
export async function startBareRelay(redisUrl: string, modelUrl: string, env: NodeJS.ProcessEnv): Promise<BareRelay> {
  const children: ChildProcess[] = [];
  const stop = async () => void (await Promise.all(children.map(stopChild)));
  try {
    const publisher = spawnEntry('servers.ts', ['bare-publisher', redisUrl, modelUrl], env);
    children.push(publisher);
    const publisherPort = await waitForPort(publisher);
    const server = spawnEntry('servers.ts', ['bare-sse', redisUrl, String(publisherPort)], env);
    children.push(server);
    return { url: `http://127.0.0.1:${await waitForPort(server)}`, children, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---- one relay row -----------------------------------------------------------------

/** One relayed token: when the model wrote it, its end-to-end time, and its two hops when the watcher saw it. */
export interface TokenTiming {
  emitted: number;
  ms: number;
  workerMs?: number;
  gatewayMs?: number;
}

export interface RelayRowInput {
  api: HttpTarget;
  streams: number;
  tasks: number;
  opts: Pick<BenchOptions, 'relayTokens' | 'relayDelayMs' | 'relayHops'>;
  /** The model's write time of each token (performance.now()), filled by its onTokenWritten hook. */
  emittedAt: ReadonlyMap<string, number>;
  /** Only used with opts.relayHops (it must be subscribed then). */
  watcher: RelayWatcher;
  /** A fresh relay token each call (unique across rows). */
  nextToken: () => string;
  /** Milliseconds left of the run's time limit; tasks are not started past it. */
  left: () => number;
}

export interface RelayRowSamples {
  /** Per token with its emission time; with the hop split when it was on. */
  tokens: TokenTiming[];
  /** When each task was posted (performance.now()). */
  postedAt: number[];
  errors: number;
  /** This process's event-loop delay p99 over the row, ms beyond its sampling period. */
  loopDelayP99Ms: number;
}

/** C streamed tasks at a time, each reply a list of unique tokens, each token timed. */
export async function measureRelayRow(inp: RelayRowInput): Promise<RelayRowSamples> {
  const { opts } = inp;
  const out: RelayRowSamples = { tokens: [], postedAt: [], errors: 0, loopDelayP99Ms: NaN };
  const pubAt = new Map<string, number>();
  if (opts.relayHops)
    inp.watcher.onEvent = (ev, at) =>
      void (ev.type === 'agent_response' && RELAY_TOKEN.test(ev.content.trim()) && pubAt.set(ev.content.trim(), at));
  const onToken = (content: unknown, at: number) => {
    const k = String(content).trim();
    const emitted = inp.emittedAt.get(k);
    if (emitted === undefined) return void out.errors++;
    const published = pubAt.get(k);
    out.tokens.push({
      emitted,
      ms: at - emitted,
      ...(published !== undefined && { workerMs: published - emitted, gatewayMs: at - published }),
    });
  };
  // This process reads the SSE streams: its own event-loop delay is part of every figure.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  try {
    await closedLoop(inp.tasks, inp.streams, async (i) => {
      if (inp.left() <= 0) return;
      const words = Array.from({ length: opts.relayTokens }, inp.nextToken);
      // A random phase (first=) keeps concurrent streams from emitting in lockstep.
      const phase = Math.floor(Math.random() * Math.max(1, opts.relayDelayMs));
      const message = `[[say text="${words.join(' ')}"]] [[slow delay=${opts.relayDelayMs} first=${phase}]] relay ${i}`;
      try {
        out.postedAt.push(performance.now());
        const stream = await openSse(
          inp.api,
          'POST',
          '/',
          { message, streaming: true },
          (ev) => ev.data?.type === 'agent_response' && onToken(ev.data.content, ev.at),
        );
        if (stream.status !== 200) out.errors++;
        await stream.done;
      } catch {
        out.errors++;
      }
    });
  } finally {
    inp.watcher.onEvent = undefined;
    loopDelay.disable();
  }
  out.loopDelayP99Ms = loopDelay.percentile(99) / 1e6 - LOOP_DELAY_RESOLUTION_MS;
  return out;
}

// ---- tokens near a task's start ------------------------------------------------------

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

export function splitByStart(
  streams: number,
  tokens: TokenTiming[],
  startedAt: number[],
  windowMs: number,
): RelaySplit {
  const starts = [...startedAt].sort((a, b) => a - b);
  const near = (t: number) => {
    // The last start at or before t (binary search: a run has thousands of tokens).
    let lo = 0;
    let hi = starts.length - 1;
    let last = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= t) [last, lo] = [mid, mid + 1];
      else hi = mid - 1;
    }
    return last >= 0 && t - starts[last] <= windowMs;
  };
  const hops = (list: TokenTiming[]): HopSummaries => ({
    total: summarize(list.map((x) => x.ms)),
    workerHop: summarize(list.flatMap((x) => (x.workerMs === undefined ? [] : [x.workerMs]))),
    gatewayHop: summarize(list.flatMap((x) => (x.gatewayMs === undefined ? [] : [x.gatewayMs]))),
  });
  return {
    streams,
    nearStart: hops(tokens.filter((x) => near(x.emitted))),
    otherwise: hops(tokens.filter((x) => !near(x.emitted))),
  };
}

// ---- the phase -------------------------------------------------------------------------

export interface RelayPhaseInput {
  opts: BenchOptions;
  gatewayUrl: string;
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

type TimedRow = { r: RelayRowSamples; otherCores: number; window: Row['window'] };

export async function runRelayPhase(inp: RelayPhaseInput): Promise<{ rows: Row[]; splits: RelaySplit[] }> {
  const { opts, log, left } = inp;
  const levels = opts.concurrency;
  const maxC = levels[levels.length - 1];
  let counter = 0;
  const nextToken = () => `z${(counter++).toString(36).padStart(5, '0')}`;
  // The streams end on their own: the watcher is needed only for the hop split, and unsubscribed it
  // is no extra subscriber for Redis to write to nor an extra wake-up of this process per event.
  if (!opts.relayHops) await inp.watcher.pause();
  const bare = await startBareRelay(inp.redisUrl, inp.modelUrl, inp.env);
  inp.started(bare);
  const quietPids = () => [...inp.stackPids(), ...bare.children.map((c) => c.pid)];
  const row = async (
    C: number,
    tasks: number,
    base: string,
    key: string | null,
    relayDelayMs = opts.relayDelayMs,
  ): Promise<TimedRow> => {
    // The last phase's tasks finished first, and this process's heap collected, so its next major GC is not due in the row.
    const q = await waitQuiet(quietPids);
    if (!q.quiet)
      log(
        `relay @${C}: the stack did not settle (${q.cores.toFixed(2)} cores busy after ${(q.waitedMs / 1000).toFixed(1)} s); measuring anyway`,
      );
    collectOwnGarbage();
    const [m0, fromUs] = [inp.cpu.mark(), monotonicUs()];
    const api = target(base, key, C);
    const r = await measureRelayRow({
      api,
      streams: C,
      tasks,
      opts: { ...opts, relayDelayMs },
      emittedAt: inp.emittedAt,
      watcher: inp.watcher,
      nextToken,
      left,
    });
    api.agent.destroy();
    return { r, otherCores: CpuMeter.foreignCores(m0, inp.cpu.mark()), window: { fromUs, toUs: monotonicUs() } };
  };
  const rows: Row[] = [];
  const splits: RelaySplit[] = [];
  try {
    // Unmeasured: the bare relay's processes optimise their code on their first tokens, as the service's did before.
    await row(maxC, 2 * maxC, bare.url, null, 1);
    for (const C of levels) {
      if (left() <= 0) break;
      const tasks = Math.max(3, Math.round((opts.relayTasks * C) / maxC));
      const service = await row(C, tasks, inp.gatewayUrl, inp.apiKey);
      const split = splitByStart(C, service.r.tokens, service.r.postedAt, START_BURST_MS);
      splits.push(split);
      const mine = serviceRows(C, service, inp.targetP99, opts.relayHops);
      rows.push(...mine);
      logRelayRow(log, C, tasks, mine[0], service.r, split);
      if (left() <= 0) break;
      rows.push(bareRelayRow(log, C, await row(C, tasks, bare.url, null)));
    }
  } finally {
    await bare.stop();
    if (!opts.relayHops) await inp.watcher.resume();
  }
  return { rows, splits };
}

/** The bare relay's row at C streams, the baseline beside the service's; logged. */
function bareRelayRow(log: RelayPhaseInput['log'], C: number, b: TimedRow): Row {
  const baseline: Row = {
    label: BARE_RELAY_LABEL,
    concurrency: streamsOf(C),
    s: summarize(b.r.tokens.map((t) => t.ms)),
    errors: b.r.errors,
    otherCores: b.otherCores,
    window: b.window,
  };
  log(
    `bare relay @${C}: ${baseline.s.count} tokens, p50=${fmtMs(baseline.s.p50)} ms p99=${fmtMs(baseline.s.p99)} ms, errors ${b.r.errors}; this process's event-loop delay p99 ${fmtMs(b.r.loopDelayP99Ms)} ms`,
  );
  return baseline;
}

const streamsOf = (C: number) => `${C} stream${C > 1 ? 's' : ''}`;

function serviceRows(C: number, t: TimedRow, targetP99: number, hops: boolean): Row[] {
  const streams = streamsOf(C);
  const of = (pick: (x: TokenTiming) => number | undefined) =>
    summarize(t.r.tokens.flatMap((x) => (pick(x) === undefined ? [] : [pick(x)!])));
  const rows: Row[] = [
    {
      label: RELAY_LABEL,
      concurrency: streams,
      s: of((x) => x.ms),
      errors: t.r.errors,
      targetP99,
      otherCores: t.otherCores,
      window: t.window,
    },
  ];
  if (hops) {
    rows.push({
      label: '  of which: model -> Redis pub/sub (worker hop)',
      concurrency: streams,
      s: of((x) => x.workerMs),
      errors: 0,
      otherCores: t.otherCores,
    });
    rows.push({
      label: '  of which: Redis pub/sub -> SSE client (gateway hop)',
      concurrency: streams,
      s: of((x) => x.gatewayMs),
      errors: 0,
      otherCores: t.otherCores,
    });
  }
  return rows;
}

function logRelayRow(
  log: (line: string) => void,
  C: number,
  tasks: number,
  row: Row,
  r: RelayRowSamples,
  split: RelaySplit,
): void {
  const { nearStart: near, otherwise: far } = split;
  log(
    `relay @${C}: ${row.s.count} tokens from ${tasks} tasks, p50=${fmtMs(row.s.p50)} ms p99=${fmtMs(row.s.p99)} ms, errors ${r.errors}; ` +
      `tokens within ${START_BURST_MS} ms after a task start: n=${near.total.count} p99=${fmtMs(near.total.p99)} ms, others: n=${far.total.count} p99=${fmtMs(far.total.p99)} ms; ` +
      `this process's event-loop delay p99 ${fmtMs(r.loopDelayP99Ms)} ms (over its ${LOOP_DELAY_RESOLUTION_MS} ms timer)`,
  );
}
