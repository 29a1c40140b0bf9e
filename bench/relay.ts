// The relay phase: at each stream count, the service's token relay row (each
// token timed from the model's write, in this process, to the SSE client's
// read, also in this process: one clock), then the same row through a bare
// relay of two processes of its own (bench/servers.ts bare-publisher and
// bare-sse) standing where the worker and the gateway stand. The bare relay's
// figures are what four process wake-ups per token cost on these cores with
// almost no work between them; what the service adds is the difference. And
// the bench's view of the event relay: the Redis watcher that tells it when tasks end.
import type { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import type { AgentEvent } from '../src/common/relay/events';
import { CHANNEL_PREFIX, taskIdFromChannel } from '../src/common/relay/keys';
import type { BenchOptions } from './main';
import {
  closedLoop,
  collectOwnGarbage,
  CpuMeter,
  fmtMs,
  HttpTarget,
  monotonicUs,
  openSse,
  summarize,
  Summary,
  target,
  waitQuiet,
} from './measure';
import { BARE_RELAY_LABEL, RELAY_LABEL, Row, rowOf, START_BURST_MS, TARGETS } from './report';
import { spawnEntry, stopChild, waitForPort } from './servers';
import type { Bench } from './stack';

/** Relay tokens are 'z' + 5 base-36 digits: unique, and one scripted-model token each (<= 6 characters). */
export const RELAY_TOKEN = /^z[0-9a-z]{5}$/;
/** Sampling period of a row's event-loop delay monitor (a 1 ms timer woke this process a thousand times a second). */
const LOOP_DELAY_RESOLUTION_MS = 10;

// ---- the bare relay -------------------------------------------------------------------

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

// ---- one relay row --------------------------------------------------------------------

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

// ---- tokens near a task's start -------------------------------------------------------

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

// ---- the bench's view of the event relay ----------------------------------------------

export interface Ended {
  type: string;
  /** performance.now() when the terminal event was seen. */
  at: number;
}

/**
 * A pattern subscription on the stack's Redis to every task's event channel.
 * It tells the bench when tasks end without polling the API (polling would add
 * load to the gateway being measured), and it stamps when a token reached Redis
 * pub/sub, which splits the relay's time into the worker's and the gateway's hop.
 */
export class RelayWatcher {
  readonly ended = new Map<string, Ended>();
  /** Extra per-event callback (the relay phase's hop split); cheap when unset. */
  onEvent?: (ev: AgentEvent, at: number) => void;
  private readonly sub: Redis;
  private waiters: (() => void)[] = [];

  constructor(redisUrl: string) {
    this.sub = new Redis(redisUrl, { lazyConnect: true, connectionName: 'bench-watch' });
    this.sub.on('pmessage', (_pattern: string, channel: string, message: string) => this.onMessage(channel, message));
  }

  private onMessage(channel: string, message: string): void {
    const at = performance.now();
    const taskId = taskIdFromChannel(channel);
    if (!taskId) return;
    let ev: AgentEvent;
    try {
      // `<publish ms> <JSON>`, as the relay publishes (src/common/relay/publisher.ts).
      ev = JSON.parse(message.startsWith('{') ? message : message.slice(message.indexOf(' ') + 1)) as AgentEvent;
    } catch {
      return;
    }
    this.onEvent?.(ev, at);
    if (ev.type !== 'agent_completed' && ev.type !== 'agent_error') return;
    if (!this.ended.has(taskId)) this.ended.set(taskId, { type: ev.type, at });
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  async start(): Promise<void> {
    await this.sub.connect();
    await this.resume();
  }

  /** Resolves when every id has ended or the time is up; returns the ids still running. */
  async waitAll(ids: string[], timeoutMs: number): Promise<string[]> {
    const end = performance.now() + timeoutMs;
    for (;;) {
      const missing = ids.filter((id) => !this.ended.has(id));
      if (missing.length === 0 || performance.now() >= end) return missing;
      // Wake on the next terminal event, or after a second.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(1000, Math.max(1, end - performance.now())));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /**
   * Unsubscribes until resume(). The subscription is an observer the service
   * does not have: Redis writes every event to it too, and this process wakes
   * for each one, on the very cores whose delays the relay row measures. Tasks
   * that end meanwhile are not seen.
   */
  async pause(): Promise<void> {
    await this.sub.punsubscribe();
  }

  async resume(): Promise<void> {
    await this.sub.psubscribe(`${CHANNEL_PREFIX}*`);
  }

  stop(): void {
    this.sub.disconnect();
  }
}

// ---- the phase ------------------------------------------------------------------------

type TimedRow = { r: RelayRowSamples; otherCores: number; window: Row['window'] };

/** At each stream count: the service's relay row and its split by task starts, then the bare relay's row. */
export async function relayPhase(b: Bench): Promise<void> {
  const { opts, log } = b;
  let counter = 0;
  const nextToken = () => `z${(counter++).toString(36).padStart(5, '0')}`;
  // The streams end on their own: the watcher is needed only for the hop split, and unsubscribed it
  // is no extra subscriber for Redis to write to nor an extra wake-up of this process per event.
  if (!opts.relayHops) await b.watcher.pause();
  const bare = (b.bare = await startBareRelay(b.stack.redisUrl, b.model.url, b.env));
  const row = async (C: number, tasks: number, base: string, key: string | null, relayDelayMs = opts.relayDelayMs) => {
    // The last phase's tasks finished first, and this process's heap collected, so its next major GC is not due in the row.
    const q = await waitQuiet(() => [...Object.values(b.pids()), ...bare.children.map((c) => c.pid)]);
    if (!q.quiet)
      log(
        `relay @${C}: the stack did not settle (${q.cores.toFixed(2)} cores busy after ${(q.waitedMs / 1000).toFixed(1)} s); measuring anyway`,
      );
    collectOwnGarbage();
    const [m0, fromUs] = [b.cpu.mark(), monotonicUs()];
    const api = target(base, key, C);
    const { emittedAt, watcher, left } = b;
    const inp = { api, streams: C, tasks, opts: { ...opts, relayDelayMs }, emittedAt, watcher, nextToken, left };
    const r = await measureRelayRow(inp);
    api.agent.destroy();
    return { r, otherCores: CpuMeter.foreignCores(m0, b.cpu.mark()), window: { fromUs, toUs: monotonicUs() } };
  };
  try {
    // Unmeasured: the bare relay's processes optimise their code on their first tokens, as the service's did before.
    await row(b.maxClients, 2 * b.maxClients, bare.url, null, 1);
    for (const C of opts.concurrency) {
      if (b.left() <= 0) break;
      const tasks = Math.max(3, Math.round((opts.relayTasks * C) / b.maxClients));
      const service = await row(C, tasks, b.gatewayUrl, b.apiKey);
      const split = splitByStart(C, service.r.tokens, service.r.postedAt, START_BURST_MS);
      b.relaySplits.push(split);
      const mine = serviceRows(C, service, opts.relayHops);
      b.rows.push(...mine);
      logRelayRow(log, C, tasks, mine[0], service.r, split);
      if (b.left() <= 0) break;
      b.rows.push(bareRelayRow(log, C, await row(C, tasks, bare.url, null)));
    }
  } finally {
    await bare.stop();
    if (!opts.relayHops) await b.watcher.resume();
  }
}

const streamsOf = (C: number) => `${C} stream${C > 1 ? 's' : ''}`;

/** The bare relay's row at C streams, the baseline beside the service's; logged. */
function bareRelayRow(log: Bench['log'], C: number, t: TimedRow): Row {
  const { otherCores, window } = t;
  const baseline = rowOf(
    BARE_RELAY_LABEL,
    streamsOf(C),
    t.r.tokens.map((x) => x.ms),
    { errors: t.r.errors, otherCores, window },
  );
  log(
    `bare relay @${C}: ${baseline.s.count} tokens, p50=${fmtMs(baseline.s.p50)} ms p99=${fmtMs(baseline.s.p99)} ms, errors ${t.r.errors}; this process's event-loop delay p99 ${fmtMs(t.r.loopDelayP99Ms)} ms`,
  );
  return baseline;
}

/** The service's relay row at C streams, and with the hop split its two hops. */
function serviceRows(C: number, t: TimedRow, hops: boolean): Row[] {
  const { otherCores, window } = t;
  const of = (pick: (x: TokenTiming) => number | undefined) =>
    t.r.tokens.flatMap((x) => (pick(x) === undefined ? [] : [pick(x)!]));
  const main = { errors: t.r.errors, targetP99: TARGETS.relay, otherCores, window };
  const rows = [
    rowOf(
      RELAY_LABEL,
      streamsOf(C),
      of((x) => x.ms),
      main,
    ),
  ];
  if (hops)
    rows.push(
      rowOf(
        '  of which: model -> Redis pub/sub (worker hop)',
        streamsOf(C),
        of((x) => x.workerMs),
        { otherCores },
      ),
      rowOf(
        '  of which: Redis pub/sub -> SSE client (gateway hop)',
        streamsOf(C),
        of((x) => x.gatewayMs),
        { otherCores },
      ),
    );
  return rows;
}

function logRelayRow(
  log: Bench['log'],
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
