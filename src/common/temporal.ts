// Temporal connections and the one-time set-up the service needs in its
// namespace (search attributes, retention), for the embedded engine and a real
// cluster alike.
import { Connection } from '@temporalio/client';
import { DefaultLogger, LogLevel, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/** The SDK's level for a pino level: the workflows' own lines (a task's start and end) are info. */
export function runtimeLogLevel(level: string): LogLevel {
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN' };
  return map[level] ?? 'ERROR';
}

type PinoLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/**
 * The pino level an SDK log line is written at. Two kinds are detail, not news: the workflow
 * bundler's multi-line webpack report (its one-line summary follows), and the warning that a
 * worker with no workflows does not poll for workflow tasks, which the worker's activities-only
 * watch worker (the `<queue>-watch` task queue) is by design.
 */
export function sdkLineLevel(entry: { level: LogLevel; message: string; meta?: Record<string, unknown> }): PinoLevel {
  const multiLine = entry.message.includes('\n') && (entry.level === 'INFO' || entry.level === 'DEBUG');
  const watchWorker = typeof entry.meta?.taskQueue === 'string' && entry.meta.taskQueue.endsWith('-watch');
  if (multiLine || (watchWorker && /^No workflows registered, not polling for workflow tasks/.test(entry.message)))
    return 'debug';
  return ({ TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const)[entry.level];
}

/** Forwards the SDK's logs (the worker's, the workflows' replay-safe `log`) to pino. */
export function installRuntimeLogger(logger: Logger, level: LogLevel = 'WARN'): void {
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      logger[sdkLineLevel(entry)]({ sdk: true, ...(entry.meta ?? {}) }, entry.message);
    }),
  });
}

export async function ensureNamespaceSetup(
  connection: Connection,
  namespace: string,
  retentionDays: number,
  logger: Logger,
): Promise<void> {
  const wanted = Object.values(SEARCH_ATTRIBUTES);
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = wanted.filter((n) => !(existing.customAttributes && n in existing.customAttributes));
  if (missing.length) {
    try {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])),
      });
      logger.info({ searchAttributes: missing }, 'registered search attributes');
    } catch (err) {
      // Several workers starting at once (a rollout, a cluster's first start): another one may
      // have registered them between our list and our add. Temporal 1.29 answers such an add as
      // done; a server that says ALREADY_EXISTS instead means the same.
      if ((err as { code?: number }).code !== 6) throw err;
    }
  }
  try {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: { seconds: retentionDays * 86400 } as never },
    });
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'could not set namespace retention');
  }
}

/** Connects, retrying while Temporal starts (the single-machine start races it). */
export async function connectWithRetry(address: string, logger: Logger, timeoutMs = 60_000): Promise<Connection> {
  const end = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    try {
      return await Connection.connect({ address, connectTimeout: 2000 });
    } catch (err) {
      if (Date.now() > end) throw err;
      if (i % 10 === 0) logger.info({ address }, 'waiting for Temporal');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
