// The worker's stack trace limit for its workflow thread (workflow-stack-traces.ts): the
// workflow thread and its contexts take it, the main thread keeps its own, and at the default
// the Web UI's Stack Trace tab (the __stack_trace query) still names the workflow code a run
// waits in.
import { randomUUID } from 'node:crypto';
import vm from 'node:vm';
import { Worker as NodeThread } from 'node:worker_threads';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, worker } from '../workflows/env';
import { workflowStackTraceLimit } from '../../src/worker/workflow-stack-traces';
import { loadConfig } from '../../src/common/config';
import type { SlotsState } from '../../workflows/account-slots';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(120_000);
let env: TestWorkflowEnvironment;
const NODE_DEFAULT = 10;

beforeAll(async () => {
  env = await createEnv();
  workflowStackTraceLimit(loadConfig({}).WORKFLOW_STACK_TRACE_LIMIT);
});
afterAll(async () => {
  // This jest process goes on to other files: their contexts get Node's default again.
  workflowStackTraceLimit(NODE_DEFAULT);
  await env?.teardown();
});

test('threads and contexts made afterwards take the limit; the calling thread keeps its own', async () => {
  const before = Error.stackTraceLimit;
  workflowStackTraceLimit(3);
  try {
    expect(vm.runInContext('Error.stackTraceLimit', vm.createContext({}))).toBe(3);
    const inThread = await new Promise<number>((resolve, reject) => {
      const t = new NodeThread("require('node:worker_threads').parentPort.postMessage(Error.stackTraceLimit)", {
        eval: true,
      });
      t.once('message', (n: number) => void t.terminate().then(() => resolve(n)));
      t.once('error', reject);
    });
    expect(inThread).toBe(3);
    expect(Error.stackTraceLimit).toBe(before);
  } finally {
    workflowStackTraceLimit(loadConfig({}).WORKFLOW_STACK_TRACE_LIMIT);
  }
});

test("at the default, the Web UI's stack trace still names the workflow code a run waits in (at 1 frame it is empty)", async () => {
  const taskQueue = `stack-${randomUUID()}`;
  // A workflow thread of its own, as the service's worker has (the tests' workers run workflows in jest's).
  const w = await worker(env, taskQueue, {}, { debugMode: false });
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const initial: SlotsState = { account, limit: 1, holders: {}, waiting: [] };
    const slots = await env.client.workflow.start('accountSlots', {
      taskQueue,
      workflowId: `slots:${account}`,
      args: [initial],
    });
    // The query the Web UI's Stack Trace tab makes; the run idles in its loop's condition.
    const trace = await waitUntil(
      'the stack trace of the waiting run',
      () => slots.query<string>('__stack_trace'),
      (t) => t.includes('account-slots.ts'),
    );
    expect(trace).toMatch(/at \w+ \(.*workflows\/account-slots\.ts:\d+:\d+\)/);
    await slots.terminate('test over');
  });
});
