// The gateway's Express application: probes, auth, body handling, routes, and
// the single error mapping.
import express, { NextFunction, Request, Response } from 'express';
import type { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../common/config';
import type { AccountDirectory } from '../common/accounts/registry';
import type { EventSubscriber } from '../common/relay/subscriber';
import type { GatewayServices } from './services/gateway-services';
import { authenticate } from './middleware/auth';
import { codecEndpoint } from './routes/codec';
import { errorHandler } from './middleware/error-handler';
import { openApiRoute } from './openapi/document';
import { consoleRoutes } from './routes/console';
import { runRoutes } from './routes/run';
import { taskRoutes } from './routes/tasks';
import { approvalRoutes } from './routes/approvals';
import { sessionRoutes } from './routes/sessions';
import { sessionFileRoutes } from './routes/session-files';
import { agentbaseRoutes } from './routes/agentbase';
import { accountRoutes } from './routes/account';
import { scheduleRoutes } from './routes/schedules';
import { datastoreRoutes, datastoreUploadRoutes } from './routes/datastores';
import { serverTiming } from './middleware/server-timing';
import { requestLog } from './middleware/request-log';
import { requestSpans } from '../common/telemetry/request-spans';
import type { Drain } from './drain';
import type { GatewayMetrics } from '../common/metrics/gateway-metrics';
import type { DependencyHealth } from './dependency-health';
import { withTimeout } from '../common/timeout';
import { UnsupportedMediaTypeError } from '../common/errors';
import { allowedMethods, answerOptions, noRoute } from './middleware/method-not-allowed';
import { apiVersion } from './middleware/api-version';
import type { OutboundPolicy } from '../common/outbound/policy';

/** What the app is handed: its clients and settings, and the services its routes call (gateway-services.ts). */
export interface GatewayDeps extends GatewayServices {
  config: Config;
  logger: Logger;
  client: Client;
  connection: Connection;
  redis: Redis;
  subscriber: EventSubscriber;
  accounts: AccountDirectory;
  /** The payload codec of the gateway's Temporal clients, served at /codec for the Web UI and CLI. */
  payloadCodec: PayloadCodec;
  /** Checks URLs users give (MCP servers) at submit; the worker checks again when it connects. */
  outbound: OutboundPolicy;
  /** The graceful stop: counts requests in flight, ends streams, refuses new requests once stopping. */
  drain?: Drain;
  /** Which dependencies answer their probes: a request that needs one that is away gets 503 at once. */
  health?: DependencyHealth;
  /** Prometheus metrics: every request counted, and GET /metrics. */
  metrics?: GatewayMetrics;
  /** Where the built web console is served from (default console/dist). */
  consoleDir?: string;
}

/** GET /readyz: Redis and Temporal each answer within READY_TIMEOUT_MS, else a 503 that says which is down. */
function readiness(deps: GatewayDeps) {
  return async (_req: Request, res: Response) => {
    const checks = await Promise.all([
      withTimeout(deps.redis.ping(), READY_TIMEOUT_MS).then(
        () => 'ok',
        (e: Error) => `down: ${e.message}`,
      ),
      withTimeout(
        deps.connection.withDeadline(Date.now() + READY_TIMEOUT_MS, () =>
          deps.connection.workflowService.getSystemInfo({}),
        ),
        READY_TIMEOUT_MS,
      ).then(
        () => 'ok',
        (e: Error) => `down: ${e.message}`,
      ),
    ]);
    const ready = checks.every((c) => c === 'ok');
    if (!ready) res.setHeader('Retry-After', '5');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'unavailable', redis: checks[0], temporal: checks[1] });
  };
}

/**
 * A POST or PATCH with a body must send JSON (the file uploads are routed before this). A method
 * the path does not serve is left to noRoute's 405, whatever its body (a POST of a file to
 * /sessions/{id}/files/{path}, which takes PUT); asked only of a body that is not JSON, so a
 * request that is pays nothing for it.
 */
function jsonOnly(req: Request, _res: Response, next: NextFunction) {
  const hasBody = Number(req.header('content-length') ?? 0) > 0 || req.header('transfer-encoding') !== undefined;
  if (
    (req.method === 'POST' || req.method === 'PATCH') &&
    hasBody &&
    !req.is('application/json') &&
    allowedMethods(req).includes(req.method)
  ) {
    return next(
      new UnsupportedMediaTypeError(
        `Content-Type must be application/json (got ${req.header('content-type') ?? 'none'})`,
      ),
    );
  }
  next();
}

export function createApp(deps: GatewayDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // A span per request when the process traces (OTEL_EXPORTER_OTLP_ENDPOINT); first, so all the request does is in it.
  const spans = requestSpans();
  if (spans) app.use(spans);
  app.use(serverTiming());
  app.use(requestLog(deps.logger));
  if (deps.metrics) app.use(deps.metrics.middleware());
  if (deps.drain) app.use(deps.drain.middleware());

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', readiness(deps));

  app.use(openApiRoute()); // the API description needs no key
  app.use(consoleRoutes(deps)); // the web console's page and assets need no key: it signs in like any client
  // Prometheus' scrape: no account key, METRICS_TOKEN when set.
  if (deps.metrics) app.get('/metrics', deps.metrics.route());
  // Operators' endpoint with its own token (CODEC_AUTH_TOKEN), not an account's key.
  app.use('/codec', codecEndpoint({ config: deps.config, codec: deps.payloadCodec }));
  // Everything below is the versioned API (the probes, the document and the operators' endpoints above are not).
  app.use(apiVersion(deps.config));
  // Which methods a path serves is no secret (the document says it): OPTIONS needs no key.
  app.use(answerOptions());
  app.use(authenticate(deps.accounts));
  // Every account route needs Temporal: while it does not answer, say so at once.
  if (deps.health) {
    const health = deps.health;
    app.use((_req: Request, _res: Response, next: NextFunction) => {
      health.require('temporal');
      next();
    });
  }
  // Files (a SQLite upload, a document as text, a session's files) come before the JSON-only rule below.
  app.use(datastoreUploadRoutes(deps));
  app.use(sessionFileRoutes(deps));
  app.use(jsonOnly);
  app.use(express.json({ limit: deps.config.BODY_LIMIT_BYTES, strict: true }));
  app.use(runRoutes(deps));
  app.use(scheduleRoutes(deps));
  app.use(datastoreRoutes(deps));
  app.use(taskRoutes(deps));
  app.use(approvalRoutes(deps));
  app.use(sessionRoutes(deps));
  app.use(agentbaseRoutes(deps));
  app.use(accountRoutes(deps));
  app.use(noRoute()); // 405 with Allow on a known path, else 404
  app.use(errorHandler(deps.logger));
  return app;
}

/** A readiness check's longest wait per dependency (a frozen one accepts and never answers). */
const READY_TIMEOUT_MS = 1000;
