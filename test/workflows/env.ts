// Workflow tests run the service's real workflows on the embedded engine
// through @temporalio/testing, with activities replaced by in-test fakes (the
// workflow's decisions are what is under test here).
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';

export const WORKFLOWS = path.resolve(__dirname, '../../workflows');
const DEV_SERVER = path.resolve(__dirname, '../../bin/temporal-dev');

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: new DefaultLogger('WARN') });
  return bundle;
}

export async function createEnv(): Promise<TestWorkflowEnvironment> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: DEV_SERVER } } });
  const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((n) => [n, KEYWORD])),
  });
  return env;
}

export async function worker(env: TestWorkflowEnvironment, taskQueue: string, activities: object): Promise<Worker> {
  return Worker.create({ connection: env.nativeConnection, namespace: 'default', taskQueue, workflowBundle: await workflowBundle(), activities });
}
