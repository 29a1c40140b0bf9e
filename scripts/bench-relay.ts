// The bench's token relay row at one stream count: C streamed tasks at a time,
// each reply a list of unique tokens, each token timed from the model's write
// (in this process) to the SSE client's read (also in this process, so one
// clock). See bench.ts for where its figures go.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { closedLoop, HttpTarget, openSse } from './bench-http';
import type { BenchOptions } from './bench-options';
import type { TokenTiming } from './bench-stats';
import type { RelayWatcher } from './bench-watch';

/** Relay tokens are 'z' + 5 base-36 digits: unique, and one scripted-model token each (<= 6 characters). */
export const RELAY_TOKEN = /^z[0-9a-z]{5}$/;
/** Sampling period of the row's event-loop delay monitor. */
export const LOOP_DELAY_RESOLUTION_MS = 10;

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
  /** Model write -> SSE client read, ms, per token. */
  overhead: number[];
  /** Per token with its emission time; with the hop split when it was on. */
  tokenAt: TokenTiming[];
  /** When each task was posted (performance.now()). */
  postedAt: number[];
  workerHop: number[];
  gatewayHop: number[];
  errors: number;
  /** This process's event-loop delay p99 over the row, ms beyond its sampling period. */
  loopDelayP99Ms: number;
}

export async function measureRelayRow(inp: RelayRowInput): Promise<RelayRowSamples> {
  const { opts } = inp;
  const out: RelayRowSamples = { overhead: [], tokenAt: [], postedAt: [], workerHop: [], gatewayHop: [], errors: 0, loopDelayP99Ms: NaN };
  const pubAt = new Map<string, number>();
  if (opts.relayHops) {
    inp.watcher.onEvent = (ev, at) => {
      if (ev.type === 'agent_response' && RELAY_TOKEN.test(ev.content.trim())) pubAt.set(ev.content.trim(), at);
    };
  }
  // This process reads the SSE streams: its own event-loop delay is part of every figure.
  // Sampled every 10 ms, not every 1: a 1 ms timer woke this process a thousand times a
  // second on the cores it measures (four alternating relay-only pairs at 8 streams,
  // session 12: p99 4.65/5.45, 4.69/4.75, 8.16/8.16, 5.28/5.98 ms without/with it).
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  try {
    await closedLoop(inp.tasks, inp.streams, async (i) => {
      if (inp.left() <= 0) return;
      const words = Array.from({ length: opts.relayTokens }, inp.nextToken);
      // A random phase (first=) keeps concurrent streams from emitting in
      // lockstep, which would turn every token into a burst of C at once.
      const phase = Math.floor(Math.random() * Math.max(1, opts.relayDelayMs));
      const message = `[[say text="${words.join(' ')}"]] [[slow delay=${opts.relayDelayMs} first=${phase}]] relay ${i}`;
      try {
        out.postedAt.push(performance.now());
        const stream = await openSse(inp.api, 'POST', '/', { message, streaming: true }, (ev) => {
          if (ev.data?.type !== 'agent_response') return;
          const k = String(ev.data.content).trim();
          const emitted = inp.emittedAt.get(k);
          const published = pubAt.get(k);
          if (emitted === undefined) {
            out.errors++;
            return;
          }
          out.overhead.push(ev.at - emitted);
          const hops = published === undefined ? {} : { workerMs: published - emitted, gatewayMs: ev.at - published };
          out.tokenAt.push({ emitted, ms: ev.at - emitted, ...hops });
          if (hops.workerMs !== undefined) {
            out.workerHop.push(hops.workerMs);
            out.gatewayHop.push(hops.gatewayMs);
          }
        });
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
