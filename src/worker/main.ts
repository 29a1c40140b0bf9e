// Entry point of the worker process: runs the service's workflows and
// activities. Scale it by starting more of them.
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client, type Connection } from '@temporalio/client';
import { type Config, datastoreDir, loadConfig } from '../common/config';
import { DatastoreAccess } from '../common/datastores/access';
import type { Logger } from 'pino';
import { createLogger } from '../common/logger';
import { commandClient } from '../common/redis';
import { connectWithRetry, ensureNamespaceSetup, installRuntimeLogger, runtimeLogLevel } from '../common/temporal';
import { EventPublisher } from '../common/relay/publisher';
import { StatusCache } from '../common/relay/status-cache';
import { createActivities } from '../../activities';
import { computerTools } from './computer';
import { webTools } from './web';
import { browserService } from './browser';
import { ThreadedModelStream } from './model-stream/thread-runner';
import { lowerPriorityExcept, scavengeWithoutHelpers } from './thread-priority';
import { workflowStackTraceLimit } from './workflow-stack-traces';
import { codecDataConverter, payloadCodec } from '../common/codec/data-converter';
import { McpPool } from '../../activities/mcp/pool';
import { policyFetch } from '../common/outbound/fetch';
import { policyFromEnv } from '../common/outbound/policy';
import { setupTracing, shutdownTracing, tracingClientInterceptors } from '../common/telemetry/tracing';
import { bundledTracing, workerTracing } from '../common/telemetry/worker-tracing';
import { workflowBundle } from './workflow-bundle';
import { FAILURE_CONVERTER_PATH } from '../common/codec/data-converter';
import { startWorkerMetrics } from '../common/metrics/worker-setup';
import { watchQueueOf } from '../../workflows/definitions';
import { deploymentOptions } from './versioning';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // Before the workflow thread and its contexts exist: they take the limit when they are made.
  workflowStackTraceLimit(config.WORKFLOW_STACK_TRACE_LIMIT);
  const logger = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT, name: 'worker' });
  // Before any thread collects: the helpers it would wait for are niced below.
  if (config.WORKER_NICE > 0) scavengeWithoutHelpers();
  installRuntimeLogger(logger, runtimeLogLevel(config.LOG_LEVEL));
  // Traces (OTEL_EXPORTER_OTLP_ENDPOINT set): workflow and activity spans under the trace the starter put in the headers.
  const tracing = setupTracing('aes-worker', config, { logger });
  // Before anything connects: with no payload keys the worker refuses to start.
  // The workflows' and the activities' client share it, so both read what either wrote.
  const codec = payloadCodec(config);
  const dataConverter = codecDataConverter(codec);
  const { connection, client, nativeConnection } = await connectTemporal(config, logger, dataConverter);
  const redis = commandClient(config.REDIS_URL, logger, 'worker');
  const ttlMs = config.RETENTION_DAYS * 86_400_000;
  const modelStream = threadedModelStream(config, logger, ttlMs);
  const tokenThread = await modelStream.start();
  // Everything but the token thread yields the cores to the API processes
  // (npm start runs them on one machine); threads started later inherit it.
  const keep = tokenThread === undefined ? [] : [tokenThread];
  if (config.WORKER_NICE > 0) lowerPriorityExcept(config.WORKER_NICE, keep);
  // Every MCP request a run makes goes through the outbound policy (OUTBOUND_ALLOWLIST).
  const outbound = policyFromEnv(config);
  const outboundFetch = policyFetch(outbound);
  const mcpPool = new McpPool({ fetch: outboundFetch, logger });
  // Prometheus metrics of the activities' attempts; served on WORKER_METRICS_PORT when set.
  const metrics = await startWorkerMetrics(config, logger);
  const datastores = datastoreAccess(config, { client, codec, policy: outbound, logger });
  // Sessions' computers (bash in a sandbox, the editor, search), probed now when offered.
  const computer = await computerTools(config, { logger, policy: outbound, metrics: metrics.metrics });
  // The web tools (web_fetch, web_search with a provider), through the same policy.
  const web = webTools(config, { policy: outbound, logger });
  // The headless browser (one Chromium, started on its first call), through the same policy.
  const browser = browserService(config, { policy: outbound, logger });
  const activities = createActivities({
    computer: computer?.tools,
    web: web?.tools,
    browser,
    mcpPool,
    datastores,
    modelStream,
    publisher: new EventPublisher({ redis, logger, ttlMs }),
    statusCache: new StatusCache(redis, logger, ttlMs),
    temporal: client,
    outboundFetch,
    config,
    logger,
  });
  const worker = await mainWorker(config, { nativeConnection, dataConverter, activities, metrics, tracing, logger });
  const watcher = await watchWorker(config, { nativeConnection, dataConverter, activities });
  // Again, for threads started meanwhile (the Temporal core's, libuv's pool).
  if (config.WORKER_NICE > 0) lowerPriorityExcept(config.WORKER_NICE, keep);
  const running = Promise.all([worker.run(), watcher.run()]);
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: config.TEMPORAL_ADDRESS }, 'worker started');
  // A launching parent (npm start, tests) learns readiness without parsing logs.
  process.send?.({ type: 'ready' });
  answerPings();
  await running;
  await modelStream.close();
  await mcpPool.close();
  await datastores.close();
  await computer?.close();
  await web?.close();
  await browser?.close();
  await outboundFetch.close();
  await metrics.close();
  redis.disconnect();
  await nativeConnection.close();
  await connection.close();
  // Last: the spans of the activities the stop cancelled.
  await shutdownTracing();
  logger.info('worker stopped');
}

/** The activities' client of Temporal (its namespace set up first) and the workers' native connection. */
async function connectTemporal(
  config: Config,
  logger: Logger,
  dataConverter: ReturnType<typeof codecDataConverter>,
): Promise<{ connection: Connection; client: Client; nativeConnection: NativeConnection }> {
  const connection = await connectWithRetry(config.TEMPORAL_ADDRESS, logger);
  await ensureNamespaceSetup(connection, config.TEMPORAL_NAMESPACE, config.RETENTION_DAYS, logger);
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter,
    interceptors: tracingClientInterceptors(),
  });
  const nativeConnection = await NativeConnection.connect({
    address: config.TEMPORAL_ADDRESS,
    grpcCompression: { codec: config.TEMPORAL_GRPC_COMPRESSION },
  });
  return { connection, client, nativeConnection };
}

/** The thread that streams model turns (its tokens to Redis), as the config says. */
function threadedModelStream(config: Config, logger: Logger, ttlMs: number): ThreadedModelStream {
  return new ThreadedModelStream({
    config: {
      openai: {
        apiKey: config.OPENAI_API_KEY ?? 'offline-scripted-model',
        baseURL: config.OPENAI_BASE_URL,
        timeoutMs: config.MODEL_RESPONSE_TIMEOUT_MS,
        idleMs: config.MODEL_STREAM_IDLE_MS,
      },
      redisUrl: config.REDIS_URL,
      ttlMs,
      logLevel: config.LOG_LEVEL,
      logJson: config.LOG_FORMAT === 'json',
    },
    logger,
  });
}

/** The datastores the activities query, with this deployment's limits. */
function datastoreAccess(
  config: Config,
  deps: Omit<ConstructorParameters<typeof DatastoreAccess>[0], 'settings'>,
): DatastoreAccess {
  return new DatastoreAccess({
    ...deps,
    settings: {
      dir: datastoreDir(config),
      sqliteRoot: config.DATASTORE_SQLITE_ROOT,
      timeoutMs: config.DATASTORE_QUERY_TIMEOUT_MS,
      maxRows: config.DATASTORE_MAX_ROWS,
      maxOpen: config.DATASTORE_MAX_OPEN,
    },
  });
}

interface WorkerParts {
  nativeConnection: NativeConnection;
  dataConverter: ReturnType<typeof codecDataConverter>;
  activities: ReturnType<typeof createActivities>;
}

/** The worker of the main task queue: the workflows and every activity. */
async function mainWorker(
  config: Config,
  w: WorkerParts & {
    metrics: Awaited<ReturnType<typeof startWorkerMetrics>>;
    tracing: ReturnType<typeof setupTracing>;
    logger: Logger;
  },
): Promise<Worker> {
  const tracingOptions = bundledTracing(workerTracing(w.tracing));
  return Worker.create({
    connection: w.nativeConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: await workflowBundle(
      {
        workflowsPath: require.resolve('../../workflows'),
        failureConverterPath: FAILURE_CONVERTER_PATH,
        interceptorModules: tracingOptions.interceptorModules,
      },
      w.logger,
    ),
    dataConverter: w.dataConverter,
    activities: w.metrics.instrument(w.activities),
    // Each task and its session stay cached while active; bounded so a burst of
    // tens of thousands of tasks does not hold them all in memory.
    maxCachedWorkflows: config.WORKER_CACHED_WORKFLOWS,
    // On SIGTERM/SIGINT the worker stops polling and cancels its running activities at once
    // (shutdownGraceTime 0): each attempt ends as failed, so Temporal retries it right away on
    // another worker (or this one restarted) instead of after a heartbeat timeout.
    shutdownGraceTime: 0,
    shutdownForceTime: '15s',
    // With tracing: the activity interceptor and the workflows' span sink (its workflow interceptors are in the bundle).
    ...tracingOptions.worker,
    // WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID: a version of a Temporal Worker Deployment.
    ...deploymentOptions(config),
  });
}

/**
 * Waits on other runs (a session's active run, until it closes) on a queue of their own: a
 * wait holds no slot of the main queue's activities, which model turns and tools need.
 */
async function watchWorker(config: Config, w: WorkerParts): Promise<Worker> {
  return Worker.create({
    connection: w.nativeConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: watchQueueOf(config.TEMPORAL_TASK_QUEUE),
    dataConverter: w.dataConverter,
    activities: { awaitRunClose: w.activities.awaitRunClose },
    maxConcurrentActivityTaskExecutions: WATCH_SLOTS,
    shutdownGraceTime: 0,
    // The same version as the main worker: a pinned run's waits are served by its own build.
    ...deploymentOptions(config),
  });
}

/** A launcher's health check (npm start's supervisor): an answer proves the main thread is not frozen. */
function answerPings(): void {
  if (!process.send) return;
  process.on('message', (m: { type?: string; id?: number }) => {
    if (m?.type === 'ping') process.send?.({ type: 'pong', id: m.id });
  });
  process.channel?.unref(); // the channel must not keep a stopped worker alive
}

/** Waits at once on the watch queue: one per session whose run is active (each an idle long poll). */
const WATCH_SLOTS = 10_000;

main().catch((err) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
