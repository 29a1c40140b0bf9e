// DeleteWorkflowExecution: an open run (terminated first), the current run of an
// id with an earlier run, closed runs, unknown ids. The real server deletes in a
// task after the call (an open run's at once, a closed run's about 30 s later),
// so what the call leads to is awaited.
import { WorkflowNotFoundError } from '@temporalio/client';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import { visWait, finish } from './workflows/visibility';
import { S, outcome } from './fuzz-tools';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/visibility') });
});
afterAll(async () => {
  await env?.teardown();
});

const ws = () => env.connection.workflowService;

const gone = (workflowId: string, runId?: string) => async () => {
  try {
    await env.client.workflow.getHandle(workflowId, runId).describe();
    return false;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true;
    throw err;
  }
};

const listed = async (workflowId: string) =>
  (await ws().listWorkflowExecutions({ namespace: env.namespace, query: `WorkflowId = '${workflowId}'` })).executions!
    .length;

test('an open run is terminated and deleted: describe, history and visibility no longer know it; the id starts anew', async () => {
  const workflowId = uid('del-open');
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(visWait, { taskQueue: env.taskQueue, workflowId });
    await waitUntil('the run to be visible', async () => (await listed(workflowId)) === 1);
    await ws().deleteWorkflowExecution({ namespace: env.namespace, workflowExecution: { workflowId } });
    await waitUntil('the run to be gone', gone(workflowId));
    await waitUntil('the run to be gone by run id', gone(workflowId, h.firstExecutionRunId));
    await waitUntil('the run to leave visibility', async () => (await listed(workflowId)) === 0);
    const again = await env.client.workflow.start(visWait, {
      taskQueue: env.taskQueue,
      workflowId,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    expect(again.firstExecutionRunId).not.toBe(h.firstExecutionRunId);
    await again.signal(finish);
    await again.result();
  });
});

test('deleting the open current run leaves the id without a current one, though an earlier closed run remains', async () => {
  const workflowId = uid('del-current');
  await env.withWorker(async () => {
    const first = await env.client.workflow.start(visWait, { taskQueue: env.taskQueue, workflowId });
    await first.signal(finish);
    await first.result();
    await env.client.workflow.start(visWait, { taskQueue: env.taskQueue, workflowId });
    await ws().deleteWorkflowExecution({ namespace: env.namespace, workflowExecution: { workflowId } });
    await waitUntil('the id to have no current run', gone(workflowId));
    expect((await env.client.workflow.getHandle(workflowId, first.firstExecutionRunId).describe()).status.name).toBe(
      'COMPLETED',
    );
    // With no current run, even REJECT_DUPLICATE starts the id anew.
    const again = await env.client.workflow.start(visWait, {
      taskQueue: env.taskQueue,
      workflowId,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    await again.signal(finish);
    await again.result();
  });
});

test('closed runs are deleted, by run id or as the current one (the real server does it about 30 s later)', async () => {
  const workflowId = uid('del-closed');
  await env.withWorker(async () => {
    const first = await env.client.workflow.start(visWait, { taskQueue: env.taskQueue, workflowId });
    await first.signal(finish);
    await first.result();
    const second = await env.client.workflow.start(visWait, { taskQueue: env.taskQueue, workflowId });
    const secondRun = (await second.describe()).runId;
    await second.signal(finish);
    await second.result();
    await waitUntil('both runs to be visible', async () => (await listed(workflowId)) === 2);
    await ws().deleteWorkflowExecution({
      namespace: env.namespace,
      workflowExecution: { workflowId, runId: first.firstExecutionRunId },
    });
    await ws().deleteWorkflowExecution({ namespace: env.namespace, workflowExecution: { workflowId } });
    await waitUntil('the first run to be gone', gone(workflowId, first.firstExecutionRunId), { timeoutMs: 60_000 });
    await waitUntil('the second run to be gone', gone(workflowId, secondRun), { timeoutMs: 60_000 });
    await waitUntil('the id to have no current run', gone(workflowId));
    await waitUntil('no run to stay visible', async () => (await listed(workflowId)) === 0);
  });
}, 120_000);

test('an unknown workflow or run is NOT_FOUND', async () => {
  const missing = await outcome(
    ws().deleteWorkflowExecution({ namespace: env.namespace, workflowExecution: { workflowId: uid('del-none') } }),
  );
  expect(missing.code).toBe(S.NOT_FOUND);
});
