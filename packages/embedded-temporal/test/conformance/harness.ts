// Shared set-up for the conformance suite: the engine ENGINE names (the embedded
// one, or the real Temporal CLI dev server and test server), or a server started
// elsewhere when TEMPORAL_ADDRESS is set; a client, and a worker on a fresh task
// queue per test file.
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, Runtime, DefaultLogger, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Client, Connection, WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { devServerPath, localEnv, timeSkippingEnv } from '../support/engine';
import { sharedLocalEnv } from '../support/shared-server';
import { cachedWorkflowBundle } from '../support/workflow-bundle';

export { ENGINE, JAVA_TEST_SERVER, ON_REAL_SERVER } from '../support/engine';

let runtimeInstalled = false;
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();
/** Bundles a workflows module once per test process, from the on-disk cache when it has it. */
export function workflowBundle(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  let b = bundles.get(workflowsPath);
  if (!b) {
    quietRuntime();
    b = cachedWorkflowBundle(workflowsPath);
    bundles.set(workflowsPath, b);
  }
  return b;
}

export interface WorkerOptions {
  /** Default: the env's own task queue. */
  taskQueue?: string;
  maxCachedWorkflows?: number;
  /** Default: the workflows/activities given to createEnv. */
  workflowsPath?: string;
  activities?: object;
  /** The worker's identity (default: the SDK's pid@host). */
  identity?: string;
}

export interface Env {
  client: Client;
  connection: Connection;
  address: string;
  namespace: string;
  taskQueue: string;
  teardown(): Promise<void>;
  /** Runs fn with a worker polling taskQueue. */
  withWorker<T>(fn: () => Promise<T>, opts?: WorkerOptions): Promise<T>;
  /** Replays a workflow's whole history through the SDK: it must replay cleanly. */
  replay(handle: WorkflowHandle): Promise<void>;
  env?: TestWorkflowEnvironment;
}

export interface EnvOptions {
  /** Absolute path of the workflows module (require.resolve('./workflows/x')). */
  workflowsPath: string;
  activities?: object;
  /** The time-skipping test server (createTimeSkipping). */
  timeSkipping?: boolean;
  dbFilename?: string;
  /**
   * `--dynamic-config-value KEY=VALUE` for the env's own server (both engines read
   * the same keys), e.g. lowered limits. Not applied to a TEMPORAL_ADDRESS server.
   */
  dynamicConfig?: Record<string, number | string | boolean>;
}

/** Starts the ENGINE's server through @temporalio/testing, or connects to TEMPORAL_ADDRESS. */
export async function createEnv(opts: EnvOptions): Promise<Env> {
  quietRuntime();
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const { env, connection, address } = await connectServer(opts);
  const client = env ? env.client : new Client({ connection, namespace });
  const taskQueue = `tq-${randomUUID()}`;
  const nativeConnection = env?.nativeConnection;
  return {
    client,
    connection,
    address,
    namespace,
    taskQueue,
    env,
    async replay(handle: WorkflowHandle) {
      const history = await handle.fetchHistory();
      await Worker.runReplayHistory(
        { workflowBundle: await workflowBundle(opts.workflowsPath) },
        history,
        handle.workflowId,
      );
    },
    async withWorker<T>(fn: () => Promise<T>, wopts: WorkerOptions = {}) {
      const { NativeConnection } = await import('@temporalio/worker');
      const conn = nativeConnection ?? (await NativeConnection.connect({ address }));
      const worker = await Worker.create({
        connection: conn,
        namespace,
        taskQueue: wopts.taskQueue ?? taskQueue,
        workflowBundle: await workflowBundle(wopts.workflowsPath ?? opts.workflowsPath),
        activities: wopts.activities ?? opts.activities,
        maxCachedWorkflows: wopts.maxCachedWorkflows,
        // Workflows in this thread, as replay runs them: a workflow thread per worker costs half a
        // CPU-second of module loading (docs/testing.md).
        debugMode: true,
        // Only when given: an explicit undefined replaces the SDK's default and the native worker refuses it.
        ...(wopts.identity ? { identity: wopts.identity } : {}),
      });
      try {
        return await worker.runUntil(fn());
      } finally {
        if (!nativeConnection) await conn.close();
      }
    },
    async teardown() {
      if (env) await env.teardown();
      else await connection.close();
    },
  };
}

/** The server the env talks to: TEMPORAL_ADDRESS's, else the ENGINE's, started for the env (time-skipping or local). */
async function connectServer(
  opts: EnvOptions,
): Promise<{ env?: TestWorkflowEnvironment; connection: Connection; address: string }> {
  if (process.env.TEMPORAL_ADDRESS && !opts.timeSkipping) {
    const address = process.env.TEMPORAL_ADDRESS;
    return { connection: await Connection.connect({ address }), address };
  }
  if (opts.timeSkipping) {
    const env = await timeSkippingEnv();
    return { env, connection: env.connection, address: env.address };
  }
  const dynamicConfig = Object.entries(opts.dynamicConfig ?? {}).flatMap(([k, v]) => [
    '--dynamic-config-value',
    `${k}=${JSON.stringify(v)}`,
  ]);
  const extraArgs = [
    '--search-attribute',
    'CustomKeyword=Keyword',
    '--search-attribute',
    'CustomInt=Int',
    ...dynamicConfig,
  ];
  // A file with a data file or limits of its own gets a server of its own; the others share the
  // jest worker's (the suite runs against a shared server anyway under TEMPORAL_ADDRESS).
  const env =
    opts.dbFilename || dynamicConfig.length
      ? await localEnv({ dbFilename: opts.dbFilename, extraArgs })
      : await sharedLocalEnv(devServerPath(), extraArgs);
  return { env, connection: env.connection, address: env.address };
}

/**
 * Runs a raw long poll with a deadline, as every SDK does: the real server refuses
 * a poll without one (INVALID_ARGUMENT "Context timeout is not set.").
 */
export function longPoll<T>(env: Env, fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  return env.connection.withDeadline(Date.now() + timeoutMs, fn);
}

export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** Event types of a workflow's history, in order. */
export async function eventTypes(h: WorkflowHandle): Promise<number[]> {
  return (await h.fetchHistory()).events!.map((e) => e.eventType!);
}

/** The last event of a workflow's history. */
export async function lastEvent(h: WorkflowHandle): Promise<temporal.api.history.v1.IHistoryEvent> {
  const events = (await h.fetchHistory()).events!;
  return events[events.length - 1];
}
