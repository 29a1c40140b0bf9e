// The replay tool's work: find runs on the configured engine, fetch their
// histories and replay them against a workflows module with the SDK's replay
// worker. Knows nothing of arguments or output format (replay.ts does).
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { DefaultLogger, LogLevel, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowBundle } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createLogger } from '../common/logger';
import { workflowBundle } from '../worker/workflow-bundle';

/** A run to replay: its id pair, as visibility or describe names it. */
export interface RunRef {
  workflowId: string;
  runId: string;
}

export interface ReplayOutcome extends RunRef {
  events: number;
  /** The determinism violation (or other replay failure), absent when the run replayed. */
  error?: string;
}

/** An expected failure (engine down, unknown id, bad module), reported as one line without a stack. */
export class ReplayToolError extends Error {}

/**
 * Only what is wrong with the tool itself reaches stderr: the core warns of
 * every failing workflow task, which during a replay is the very failure the
 * report already names, so its logs are forwarded from ERROR up only.
 */
export function quietRuntime(level: LogLevel = 'WARN'): void {
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => process.stderr.write(`[sdk ${entry.level}] ${entry.message}\n`)),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
}

export async function connect(
  address: string,
  namespace: string,
  dataConverter?: DataConverter,
): Promise<{ client: Client; close(): Promise<void> }> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5000 });
  } catch (err) {
    throw new ReplayToolError(`cannot reach Temporal at ${address}: ${oneLine(err)}`);
  }
  return { client: new Client({ connection, namespace, dataConverter }), close: () => connection.close() };
}

/** Resolves each id (and the optional run id) to a run, failing on the first one the engine does not know. */
export async function resolveRuns(client: Client, ids: string[], runId?: string): Promise<RunRef[]> {
  const runs: RunRef[] = [];
  for (const workflowId of ids) {
    try {
      const info = await client.workflow.getHandle(workflowId, runId).describe();
      runs.push({ workflowId, runId: info.runId });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        throw new ReplayToolError(
          `workflow ${workflowId}${runId ? ` run ${runId}` : ''} not found in namespace ${client.options.namespace}`,
        );
      }
      throw err;
    }
  }
  return runs;
}

/**
 * Visibility query for runs closed in the last `hours`. The SQL-backed real dev
 * server and the embedded engine both take a status inequality and an RFC3339
 * CloseTime comparison; neither needs an ORDER BY (SQL stores reject one).
 */
export function closedSinceQuery(hours: number, now = Date.now()): string {
  const since = new Date(now - hours * 3_600_000).toISOString();
  return `ExecutionStatus != 'Running' AND CloseTime > '${since}'`;
}

export async function listClosedRuns(client: Client, hours: number): Promise<RunRef[]> {
  const runs: RunRef[] = [];
  for await (const info of client.workflow.list({ query: closedSinceQuery(hours) })) {
    runs.push({ workflowId: info.workflowId, runId: info.runId });
  }
  return runs;
}

/**
 * The workflows' bundle, with the data converter's failure converter inside (workflows convert
 * their own errors); kept on disk by content like the worker's, so a repeated replay (and one of
 * the workflows a worker has run) skips the build.
 */
export async function bundle(workflowsPath: string, dataConverter?: DataConverter): Promise<WorkflowBundle> {
  try {
    return await workflowBundle(
      { workflowsPath, failureConverterPath: dataConverter?.failureConverterPath, interceptorModules: [] },
      createLogger({ level: 'silent' }),
    );
  } catch (err) {
    throw new ReplayToolError(`cannot bundle the workflows at ${workflowsPath}: ${oneLine(err)}`);
  }
}

/**
 * Replays the runs one after another on one replay worker, fetching each
 * history only when its turn comes so a long --all never holds them all.
 * `dataConverter` decrypts the histories' payloads (the service's codec).
 */
export async function* replayRuns(
  client: Client,
  workflowBundle: WorkflowBundle,
  runs: RunRef[],
  dataConverter?: DataConverter,
): AsyncGenerator<ReplayOutcome> {
  const fetched: { run: RunRef; events: number }[] = [];
  async function* histories(): AsyncGenerator<HistoryAndWorkflowId> {
    for (const run of runs) {
      const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      fetched.push({ run, events: history.events?.length ?? 0 });
      yield { workflowId: run.workflowId, history };
    }
  }
  let i = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter }, histories())) {
    // Results come in the order of the histories pushed.
    const { run, events } = fetched[i++];
    yield { ...run, events, ...(result.error && { error: replayErrorMessage(result.error) }) };
  }
}

/**
 * The SDK wraps the core's verdict ("Nondeterminism error: Timer machine does
 * not handle this event: HistoryEvent(id: 8, ...)") in a paragraph and a Rust
 * debug dump; the verdict is what names the diverging event or command.
 */
export function replayErrorMessage(err: Error): string {
  const verdict = /message: "((?:[^"\\]|\\.)*)"/.exec(err.message)?.[1]?.replace(/\\(.)/g, '$1');
  return `${err.name}: ${oneLine(verdict ?? err.message)}`;
}

/**
 * One line per message: the core's may span several, and the client's gRPC
 * errors ("Failed to describe workflow") keep the server's reason in `cause`.
 */
export function oneLine(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error && !message.includes(cause.message)) message += `: ${cause.message}`;
  return message.replace(/\s*\n\s*/g, ' ').trim();
}
