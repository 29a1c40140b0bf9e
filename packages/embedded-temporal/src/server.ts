// Assembles the embedded Temporal server: engine (in memory or on a durable
// log), feature hooks, and the gRPC services on one port.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Clock } from './clock';
import { Engine } from './engine/engine';
import { FileStore, MemoryStore, Store } from './storage/store';
import { recoverEngine, liveState } from './engine/recovery';
import { dispatchWorkflowTask } from './engine/workflow-tasks';
import { dispatchActivity } from './engine/activities';
import { dispatchQueryTask, dispatchQueuedQueries } from './engine/queries';
import { onRunClosed } from './engine/child-close';
import { abandonUpdates } from './engine/updates';
import { buildService, Handlers } from './rpc/grpc-service';
import { workflowHandlers } from './rpc/workflow-service';
import { workerHandlers } from './rpc/worker-service';
import { visibilityHandlers } from './rpc/visibility-service';
import { operatorHandlers } from './rpc/operator-service';
import { namespaceHandlers } from './rpc/namespace-service';
import { checkRequest } from './rpc/request-checks';
import { testHandlers } from './rpc/test-service';
import { scheduleHandlers, startScheduler } from './schedules/scheduler';
import { startRetention } from './engine/retention';
import { ClosedArchive } from './engine/closed-archive';
import { ensureSystemNamespace } from './engine/namespaces';
import { limitsFromDynamicConfig, closedInMemoryFromDynamicConfig } from './engine/limits';
import { installHistoryLimits } from './engine/history-limits';
import { ActivityExecutions } from './engine/activity-executions';
import { armActivityRun, dispatchActivityRun } from './engine/activity-transitions';
import { activityExecutionHandlers } from './rpc/activity-execution-service';

export interface DevServerOptions {
  /** Port to listen on; 0 picks a free one. Default 7233. */
  port?: number;
  /** Address to bind. Default 127.0.0.1. */
  ip?: string;
  /** Namespace registered at start besides "default". */
  namespace?: string;
  /** Durable log file; absent means in memory. */
  dbFilename?: string;
  /** Serve the TestService and skip time when idle (the time-skipping test server). Default false. */
  timeSkipping?: boolean;
  /** Closed runs kept in memory before older ones move to the archive file (default 1000; needs dbFilename). */
  maxClosedInMemory?: number;
  /** fdatasync each commit (default true); off only for benchmarks comparing the cost. */
  fsync?: boolean;
  /** The durable log is compacted once past this size and twice its last compacted size (default 64 MiB). */
  compactMinBytes?: number;
  /** --dynamic-config-value settings; the limits (engine/limits.ts) are read from them. */
  dynamicConfig?: Record<string, unknown>;
  logger: Logger;
}

export interface DevServer {
  port: number;
  engine: Engine;
  close(): Promise<void>;
}

// What grpc-js itself accepts; the frontend's own, smaller limit is applied per
// request (grpc-service.ts) so that its error reads as the real server's.
const MAX_MESSAGE = 128 * 1024 * 1024;

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const clock = new Clock({ timeSkipping: opts.timeSkipping });
  const { store, recovered } = await openStore(opts);

  const limits = limitsFromDynamicConfig(opts.dynamicConfig ?? {}, opts.logger);
  const engine = new Engine({ clock, logger: opts.logger, store, limits });
  wireEngine(engine);
  if (opts.dbFilename) {
    engine.archive = new ClosedArchive(`${opts.dbFilename}.closed`);
    const closedMax = opts.maxClosedInMemory ?? closedInMemoryFromDynamicConfig(opts.dynamicConfig ?? {}, opts.logger);
    if (closedMax !== undefined) engine.maxClosedInMemory = closedMax;
  }
  if (recovered) {
    recoverEngine(engine, recovered);
    opts.logger.info({ runs: engine.executions.size, file: opts.dbFilename }, 'recovered state');
  }
  engine.ensureNamespace('default');
  // The Java test server has no system namespace; the dev server does.
  if (!opts.timeSkipping) ensureSystemNamespace(engine);
  if (opts.namespace) engine.ensureNamespace(opts.namespace);
  const scheduler = startScheduler(engine, recovered);
  // Standalone activities keep their own records beside the runs.
  const activities = new ActivityExecutions(engine);
  engine.dispatchers.sact = (t, identity) => dispatchActivityRun(activities, t.key, t.attempt, identity);
  if (recovered) activities.recover(recovered, (a) => armActivityRun(activities, a));
  if (!opts.timeSkipping) activities.startRetention();
  // The test server keeps everything (and a periodic sweep would make virtual time spin).
  const retention = opts.timeSkipping ? undefined : startRetention(engine);
  await engine.flush();

  const server = grpcServer(engine, activities, scheduler, clock, opts);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${opts.ip ?? '127.0.0.1'}:${opts.port ?? 7233}`,
      grpc.ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  let closed = false;
  return {
    port,
    engine,
    close: async () => {
      if (closed) return;
      closed = true;
      scheduler.stop();
      activities.stop();
      retention?.stop();
      engine.matching.closeAll();
      clock.stop();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await engine.flush();
      await store.close();
      engine.archive?.close();
    },
  };
}

type RecoveredState = Awaited<ReturnType<typeof FileStore.open>>['state'];

/** The durable log (and the state it recovers) with a db file, else an in-memory store. */
async function openStore(opts: DevServerOptions): Promise<{ store: Store; recovered?: RecoveredState }> {
  if (!opts.dbFilename) return { store: new MemoryStore() };
  const opened = await FileStore.open(opts.dbFilename, {
    fsync: opts.fsync ?? true,
    compactMinBytes: opts.compactMinBytes,
  });
  return { store: opened.store, recovered: opened.state };
}

/** The engine's hooks: its live state for compaction, the history limits, the task dispatchers and what a run's close sets off. */
function wireEngine(engine: Engine): void {
  engine.liveState = () => liveState(engine);
  installHistoryLimits(engine);
  engine.dispatchers.wft = (t, identity) =>
    dispatchWorkflowTask(engine, t.key, t.scheduledEventId, t.attempt, identity);
  engine.dispatchers.act = (t, identity) => dispatchActivity(engine, t.key, t.scheduledEventId, t.attempt, identity);
  engine.dispatchers.query = (t) => dispatchQueryTask(engine, t.key, t.queryId);
  engine.closeHooks.push((e) => onRunClosed(engine, e));
  engine.closeHooks.push((e) => abandonUpdates(engine, e));
  engine.closeHooks.push((e) => dispatchQueuedQueries(engine, e));
}

/** The gRPC server with the services: WorkflowService (and the Schedules and standalone-activity calls), OperatorService, TestService when time skips. */
function grpcServer(
  engine: Engine,
  activities: ActivityExecutions,
  scheduler: ReturnType<typeof startScheduler>,
  clock: Clock,
  opts: DevServerOptions,
): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE,
    'grpc.max_send_message_length': MAX_MESSAGE,
    // Channelz bookkeeping costs ~4% CPU per call and nothing here reads it.
    'grpc.enable_channelz': 0,
  });
  const wf: Handlers = {
    ...workflowHandlers(engine),
    ...namespaceHandlers(engine),
    ...workerHandlers(engine),
    ...visibilityHandlers(engine),
    ...scheduleHandlers(engine, scheduler),
  };
  // Takes over the activity responses whose token or ids name a standalone activity.
  Object.assign(wf, activityExecutionHandlers(engine, activities, wf));
  const add = (name: string, handlers: Handlers) => {
    const svc = buildService(name, handlers, opts.logger, (method, req, ctx) => checkRequest(engine, method, req, ctx));
    server.addService(svc.definition, svc.implementation);
  };
  add('temporal.api.workflowservice.v1.WorkflowService', wf);
  add('temporal.api.operatorservice.v1.OperatorService', operatorHandlers(engine));
  if (opts.timeSkipping) add('temporal.api.testservice.v1.TestService', testHandlers(clock));
  return server;
}
