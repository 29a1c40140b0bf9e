// Entry point of the gateway process: the HTTP API. Stateless; scale it by
// starting more of them behind a load balancer.
import { policyFromEnv } from '../common/outbound/policy';
import { Client, Connection } from '@temporalio/client';
import { type Config, loadConfig } from '../common/config';
import type { Logger } from 'pino';
import { createLogger } from '../common/logger';
import { commandClient, subscriberClient } from '../common/redis';
import { StatusCache } from '../common/relay/status-cache';
import { EventSubscriber } from '../common/relay/subscriber';
import { EventPublisher } from '../common/relay/publisher';
import { AccountDirectory, AccountsRegistry } from '../common/accounts/registry';
import { parseApiKeys } from '../common/accounts/keys';
import { buildServices } from './services/gateway-services';
import { inProcessStarter, relayAwareStarter, ThreadedStarter } from './start-thread/starter';
import { createApp } from './app';
import { createGatewayMetrics } from '../common/metrics/gateway-metrics';
import { Drain } from './drain';
import { DependencyHealth } from './dependency-health';
import { gatewayServer } from './gateway-server';
import { codecDataConverter, codecFromKeys, payloadKeysInForce } from '../common/codec/data-converter';
import { setupTracing, shutdownTracing, tracingClientInterceptors } from '../common/telemetry/tracing';

/** A cache read or write that takes longer is passed over (the status comes from Temporal). */
const CACHE_OP_TIMEOUT_MS = 500;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT, name: 'gateway' });
  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT set): before the clients, whose interceptor carries each request's trace into the workflows it starts.
  setupTracing('aes-gateway', config, { logger });
  // Before anything connects: with no payload keys the gateway refuses to start.
  const payloadKeys = payloadKeysInForce(config);
  const payloadCodec = codecFromKeys(payloadKeys);
  const { connection, client } = temporalClient(config, payloadCodec);
  const redis = commandClient(config.REDIS_URL, logger, 'gateway');
  const sub = subscriberClient(config.REDIS_URL, logger, 'gateway-sub');
  const ttlMs = config.RETENTION_DAYS * 86_400_000;
  const accounts = await startAccounts(config, client, logger);
  const threaded = threadedStarter(config, payloadKeys, logger);
  await threaded.ready();
  // Metrics (GET /metrics): this process's registry, plus the worker's under npm start (METRICS_INCLUDE_URLS).
  const metrics = createGatewayMetrics({ config, client, connection, logger, sseClients: () => subscriber.clients });
  metrics.listenForRestarts();
  const subscriber = new EventSubscriber(redis, sub, logger, (seconds) => metrics.relayLag.observe(seconds));
  const starter = relayAwareStarter(inProcessStarter(client, connection), threaded, () => subscriber.activeTasks > 0);
  // Probed in the background: a request that needs a dependency that is away gets 503 at once.
  const health = dependencyHealth(redis, connection, logger);
  health.start();
  // Status reads fall back to Temporal rather than wait on a Redis that does not answer.
  const cache = new StatusCache(redis, logger, ttlMs, {
    available: () => !health.isAway('redis'),
    opTimeoutMs: CACHE_OP_TIMEOUT_MS,
  });
  const publisher = new EventPublisher({ redis, logger, ttlMs });
  const drain = new Drain();
  const outbound = policyFromEnv(config);
  const services = buildServices({
    client,
    connection,
    config,
    logger,
    cache,
    publisher,
    starter,
    payloadCodec,
    outbound,
  });
  const app = createApp({
    ...services,
    config,
    logger,
    client,
    connection,
    redis,
    subscriber,
    accounts,
    payloadCodec,
    outbound,
    drain,
    health,
    metrics,
  });
  const server = await listen(app, config, logger, payloadCodec.keyIds);
  stopOnSignal(config, logger, { drain, server, accounts, health, redis, sub, starter, connection });
}

/** The gateway's Temporal client. Lazy: the gateway starts (and answers 503) even while Temporal is down. */
function temporalClient(config: Config, payloadCodec: ReturnType<typeof codecFromKeys>) {
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: codecDataConverter(payloadCodec),
    interceptors: tracingClientInterceptors(),
  });
  return { connection, client };
}

/** The accounts: API_KEYS, and the registry in Temporal when API_KEYS_SOURCE says so (served from API_KEYS until it answers). */
async function startAccounts(config: Config, client: Client, logger: Logger): Promise<AccountDirectory> {
  const envKeys = parseApiKeys(config.API_KEYS);
  const registry =
    config.API_KEYS_SOURCE === 'temporal' ? new AccountsRegistry(client, config.TEMPORAL_TASK_QUEUE) : undefined;
  const accounts = new AccountDirectory(registry, envKeys, logger);
  await accounts.start().catch(() => logger.warn('accounts registry not reachable yet; serving API_KEYS accounts'));
  return accounts;
}

/** SIGINT or SIGTERM: drain (GATEWAY_DRAIN_MS), let go of every client, and exit. */
function stopOnSignal(
  config: Config,
  logger: Logger,
  d: {
    drain: Drain;
    server: ReturnType<typeof gatewayServer>;
    accounts: AccountDirectory;
    health: DependencyHealth;
    redis: ReturnType<typeof commandClient>;
    sub: ReturnType<typeof subscriberClient>;
    starter: ReturnType<typeof relayAwareStarter>;
    connection: Connection;
  },
): void {
  const { drain, server, accounts, health, redis, sub, starter, connection } = d;
  const stop = async () => {
    logger.info(
      { deadlineMs: config.GATEWAY_DRAIN_MS },
      'gateway stopping: answering the requests in flight, ending streams',
    );
    const { cut } = await drain.run(server, config.GATEWAY_DRAIN_MS);
    logger.info({ cut }, cut ? 'gateway drained; requests still open at the deadline were cut' : 'gateway drained');
    accounts.stop();
    health.stop();
    redis.disconnect();
    sub.disconnect();
    // The start thread's spans, then this thread's, go out before the exit.
    void Promise.allSettled([starter.close(), connection.close()])
      .then(shutdownTracing)
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

/** Redis and Temporal, each probed with a short deadline. */
function dependencyHealth(
  redis: ReturnType<typeof commandClient>,
  connection: Connection,
  logger: Logger,
): DependencyHealth {
  return new DependencyHealth(
    {
      redis: () => redis.ping(),
      temporal: () => connection.withDeadline(Date.now() + 1000, () => connection.workflowService.getSystemInfo({})),
    },
    logger,
  );
}

/** The thread that makes the submit path's Temporal calls while streams are being relayed (relayAwareStarter). */
function threadedStarter(config: Config, payloadKeys: string, logger: Logger): ThreadedStarter {
  return new ThreadedStarter({
    config: {
      address: config.TEMPORAL_ADDRESS,
      namespace: config.TEMPORAL_NAMESPACE,
      logLevel: config.LOG_LEVEL,
      logJson: config.LOG_FORMAT === 'json',
      payloadKeys,
      tracing: {
        OTEL_EXPORTER_OTLP_ENDPOINT: config.OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_SERVICE_NAME: config.OTEL_SERVICE_NAME,
      },
    },
    logger,
  });
}

/** The HTTP server of the app, listening on PORT and HOST. */
async function listen(
  app: Parameters<typeof gatewayServer>[0],
  config: Config,
  logger: Logger,
  payloadKeyIds: string[],
): Promise<ReturnType<typeof gatewayServer>> {
  const server = gatewayServer(app);
  // Long SSE streams and long polls must not be cut by Node's defaults.
  server.requestTimeout = 0;
  server.headersTimeout = 65_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  logger.info(
    {
      port: config.PORT,
      host: config.HOST,
      payloadKeyIds,
      codecEndpoint: config.CODEC_AUTH_TOKEN ? 'on' : 'off',
    },
    'gateway listening',
  );
  return server;
}

main().catch((err) => {
  process.stderr.write(`gateway failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
