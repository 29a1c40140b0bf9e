// One Prometheus registry per process. Every sample carries `process`
// (gateway or worker): the gateway's /metrics serves the worker's text along
// with its own, and both have the same default process metrics, which would
// otherwise be the same series twice.
import { collectDefaultMetrics, Registry } from 'prom-client';

export type ProcessName = 'gateway' | 'worker';

/** Metric names start with this (the process metrics of prom-client keep theirs). */
export const PREFIX = 'aes_';

/** A registry with prom-client's default process metrics (CPU, memory, event-loop lag, GC). */
export function processRegistry(name: ProcessName): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ process: name });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Histogram buckets, seconds: each fits the durations it measures. */
export const BUCKETS = {
  /** Relay lag: a token's trip from its publisher to an SSE client is milliseconds. */
  relay: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  /** HTTP requests: most are milliseconds; long polls and streams land in the top buckets. */
  http: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60],
  /** A model turn or a tool call: from milliseconds (a built-in tool) to minutes (a long answer, an MCP call). */
  step: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  /** Queue wait and task duration: from sub-second to an hour. */
  task: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600],
} as const;
