// Workflow tests run the service's real workflows on the ENGINE (test/engine.ts)
// through @temporalio/testing, with activities replaced by in-test fakes (the
// workflow's decisions are what is under test here).
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, WorkflowBundleWithSourceMap, type WorkerOptions } from '@temporalio/worker';
import pino from 'pino';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';
import { devServerPath } from '../engine';
import { sharedLocalEnv } from '../../packages/embedded-temporal/test/support/shared-server';
import { workflowBundle as cachedBundle } from '../../src/worker/workflow-bundle';

export const WORKFLOWS = path.resolve(__dirname, '../../workflows');

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= cachedBundle({ workflowsPath: WORKFLOWS, interceptorModules: [] }, pino({ enabled: false }));
  return bundle;
}

/**
 * The ENGINE's dev server with the service's search attributes: the one this jest worker's
 * workflow tests share (test files stay apart by their random task queues and ids).
 */
export async function createEnv(): Promise<TestWorkflowEnvironment> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  return sharedLocalEnv(
    devServerPath(),
    Object.values(SEARCH_ATTRIBUTES).flatMap((n) => ['--search-attribute', `${n}=Keyword`]),
  );
}

export async function worker(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  activities: object,
  options: Partial<WorkerOptions> = {},
): Promise<Worker> {
  return Worker.create({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    // Workflows in this thread, as replay runs them: a workflow thread per worker costs half a
    // CPU-second of module loading (docs/testing.md).
    debugMode: true,
    ...options,
  });
}

/**
 * A worker that keeps at most `cached` runs in memory, so runs are rebuilt from their history
 * mid-flight (0: at every workflow task, as a worker started afresh does), and on which a
 * nondeterminism fails the run at once instead of its task retrying.
 *
 * Past `cached` workflows, SDK core evicts a run even while its task is being worked on; if that
 * task then resolves local activities (an approval's or a run's end relay), core drops the task's
 * completion ("... This is an SDK bug.") and the engine waits out the task's timeout. So a test
 * with `cached` 0 keeps other workflows (a session's) off the queue while it runs what it rebuilds.
 * Core can also lose a query task that comes in beside the next workflow task while it evicts: a
 * query of a running run on such a worker needs a deadline, and to be asked again.
 */
export function replayingWorker(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  activities: object,
  cached: number,
): Promise<Worker> {
  return worker(env, taskQueue, activities, {
    maxCachedWorkflows: cached,
    workflowFailureErrorTypes: { '*': ['NondeterminismError'] },
  });
}

/** Histories of the current workflow code are saved here; older generations stay for the replay test. */
export const HISTORY_GENERATION = '8-slots-released-by-end';

/** With UPDATE_HISTORIES set, saves the runs' histories as `<name>[-n].json` of the current generation. */
export async function saveHistories(name: string, ...handles: WorkflowHandle[]): Promise<void> {
  if (!process.env.UPDATE_HISTORIES) return;
  for (const [n, h] of handles.entries()) {
    const file = path.join(
      __dirname,
      'histories',
      HISTORY_GENERATION,
      `${name}${handles.length > 1 ? `-${n}` : ''}.json`,
    );
    // Stack traces in failures name this machine's paths: keep them out of the repository.
    const root = path.resolve(__dirname, '../..') + path.sep;
    fs.writeFileSync(
      file,
      historyToJSON(await h.fetchHistory())
        .split(root)
        .join('<repo>/'),
    );
  }
}
