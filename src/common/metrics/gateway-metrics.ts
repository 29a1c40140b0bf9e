// The gateway's metrics and its /metrics route: HTTP requests, SSE clients,
// relay lag, tasks by status (counted in Temporal at scrape time), component
// restarts (told by `npm start` over IPC), and the texts of the other
// processes' endpoints (METRICS_INCLUDE_URLS), merged into one exposition.
import type { RequestHandler } from 'express';
import type { Client, Connection } from '@temporalio/client';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { UnauthorizedError } from '../errors';
import { decodePayload } from '../json-payload';
import { mergeExpositions } from './exposition';
import { httpMetrics } from './http-metrics';
import { fetchIncluded, includeStateLogger } from './include';
import { bearerAccepted } from './metrics-server';
import { BUCKETS, PREFIX, processRegistry } from './registry';
import { TaskCounts, type CountFn } from './task-counts';
import { TASK_STATUSES } from '../../../workflows/types';

export interface GatewayMetricsOptions {
  /** Tasks by status; absent: aes_tasks has no samples. */
  taskCounts?: TaskCounts;
  /** SSE clients connected to this gateway now. */
  sseClients?: () => number;
  /** METRICS_INCLUDE_URLS. */
  includeUrls?: readonly string[];
  /** METRICS_TOKEN: asked of scrapers, and sent to the included endpoints. */
  token?: string;
  /** Longest wait for an included endpoint, ms. */
  includeTimeoutMs?: number;
  /** How includes are fetched (tests); default the global fetch. */
  fetch?: typeof fetch;
  logger: Logger;
}

/** What `npm start` sends the gateway over IPC: each component's restarts so far. */
export interface RestartsMessage {
  type: 'restarts';
  counts: Record<string, number>;
}

export class GatewayMetrics {
  readonly httpRequests: Counter<'method' | 'route' | 'status_class'>;
  readonly httpSeconds: Histogram<'method' | 'route'>;
  readonly relayLag: Histogram;
  private readonly includeUp: Gauge<'url'>;
  private readonly restarts = new Map<string, number>();
  private readonly logIncludes: ReturnType<typeof includeStateLogger>;

  constructor(
    readonly registry: Registry,
    private readonly opts: GatewayMetricsOptions,
  ) {
    const registers = [registry];
    this.httpRequests = new Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by method, route template and status class (a stream counts when it closes).',
      labelNames: ['method', 'route', 'status_class'],
      registers,
    });
    this.httpSeconds = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Time from a request to the end of its response (a stream: its whole life), by method and route template.',
      labelNames: ['method', 'route'],
      buckets: [...BUCKETS.http],
      registers,
    });
    this.relayLag = new Histogram({
      name: `${PREFIX}relay_lag_seconds`,
      help: "Time from an event's publish (worker) to this gateway writing it to an SSE client, for live events.",
      buckets: [...BUCKETS.relay],
      registers,
    });
    this.includeUp = new Gauge({
      name: `${PREFIX}metrics_include_up`,
      help: 'Whether the last scrape could include the metrics of a METRICS_INCLUDE_URLS endpoint (1) or not (0).',
      labelNames: ['url'],
      registers,
    });
    this.defineCollected(registers);
    this.logIncludes = includeStateLogger(opts.logger);
  }

  /** The metrics whose values are read when scraped. */
  private defineCollected(registers: Registry[]): void {
    const { taskCounts, sseClients } = this.opts;
    const restarts = this.restarts;
    new Gauge({
      name: `${PREFIX}tasks`,
      help: 'Tasks by status, counted in Temporal visibility (the same from every gateway; absent while Temporal does not answer within 1 s).',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        const counts = await taskCounts?.get();
        if (counts) for (const status of TASK_STATUSES) this.set({ status }, counts[status]);
      },
    });
    new Gauge({
      name: `${PREFIX}sse_clients`,
      help: 'SSE clients connected to this gateway (task event streams open).',
      registers,
      collect() {
        this.set(sseClients?.() ?? 0);
      },
    });
    new Counter({
      name: `${PREFIX}component_restarts_total`,
      help: "Restarts of a component (engine, redis, worker, gateway) by `npm start`'s supervisor since it started.",
      labelNames: ['component'],
      registers,
      collect() {
        // The launcher keeps the totals (they outlive a restarted gateway): the last ones it sent.
        this.reset();
        for (const [component, n] of restarts) this.inc({ component }, n);
      },
    });
  }

  /** The launcher's latest totals. */
  setRestarts(counts: Record<string, number>): void {
    for (const [component, n] of Object.entries(counts))
      if (Number.isFinite(n) && n >= 0) this.restarts.set(component, n);
  }

  /** Express middleware counting every request. */
  middleware(): RequestHandler {
    return httpMetrics(this.httpRequests, this.httpSeconds);
  }

  /** The whole exposition: this registry's and each included endpoint's, merged. */
  async scrape(): Promise<string> {
    // The task counts are asked at the same time as the includes, so a slow Temporal and a slow worker cost one wait.
    const [included] = await Promise.all([
      fetchIncluded(this.opts.includeUrls ?? [], {
        timeoutMs: this.opts.includeTimeoutMs ?? 1000,
        token: this.opts.token,
        fetch: this.opts.fetch,
      }),
      this.opts.taskCounts?.get(),
    ]);
    this.includeUp.reset();
    for (const r of included) this.includeUp.set({ url: r.label }, r.text === undefined ? 0 : 1);
    this.logIncludes(included);
    const own = await this.registry.metrics();
    return mergeExpositions([own, ...included.flatMap((r) => (r.text === undefined ? [] : [r.text]))]);
  }

  /** GET /metrics: no account key; METRICS_TOKEN when set. */
  route(): RequestHandler {
    return (req, res, next) => {
      if (!bearerAccepted(req.header('authorization'), this.opts.token))
        return next(new UnauthorizedError('metrics need "Authorization: Bearer <METRICS_TOKEN>"'));
      this.scrape().then((text) => void res.type(this.registry.contentType).send(text), next);
    };
  }

  /** Takes the restart totals `npm start` sends over IPC (sent again after this gateway restarts). */
  listenForRestarts(proc: NodeJS.Process = process): void {
    if (!proc.send) return;
    proc.on('message', (m: Partial<RestartsMessage>) => {
      if (m?.type === 'restarts' && m.counts && typeof m.counts === 'object') this.setRestarts(m.counts);
    });
    proc.channel?.unref(); // the channel must not keep a stopping gateway alive
  }
}

/** CountWorkflowExecutions through the gateway's client, within the deadline. */
export function temporalCounter(client: Client, connection: Connection, namespace: string, timeoutMs = 1000): CountFn {
  return async (query) => {
    const r = await connection.withDeadline(Date.now() + timeoutMs, () =>
      client.workflowService.countWorkflowExecutions({ namespace, query }),
    );
    return {
      count: Number(r.count ?? 0),
      groups: (r.groups ?? []).map((g) => ({
        value: String(decodePayload(g.groupValues?.[0]) ?? ''),
        count: Number(g.count ?? 0),
      })),
    };
  };
}

export interface GatewayMetricsSetup {
  config: Pick<Config, 'METRICS_TOKEN' | 'METRICS_INCLUDE_URLS' | 'TEMPORAL_NAMESPACE'>;
  client: Client;
  connection: Connection;
  logger: Logger;
  sseClients: () => number;
}

/** The gateway process's metrics: its registry, the task counts through its Temporal client, the includes of its config. */
export function createGatewayMetrics(s: GatewayMetricsSetup): GatewayMetrics {
  return new GatewayMetrics(processRegistry('gateway'), {
    taskCounts: new TaskCounts(temporalCounter(s.client, s.connection, s.config.TEMPORAL_NAMESPACE)),
    sseClients: s.sseClients,
    includeUrls: s.config.METRICS_INCLUDE_URLS,
    token: s.config.METRICS_TOKEN,
    logger: s.logger,
  });
}
