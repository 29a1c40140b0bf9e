// A reset and the runs around the one it resets: a child started before the reset point stays the
// new run's child (the terminated run's close policy spares it, and its result reaches the new
// run), and resetting an earlier run of a continue-as-new chain terminates the chain's current run
// and reapplies what that run received. The resets themselves: reset.engine.test.ts.
import { createEnv, Env, uid } from './harness';
import { continuesOnce, finishSignal, noteSignal, parentOfWaiter } from './workflows/reset';
import { step, timesRun } from './activities/reset';
import { reset, settled, signalsIn, taskThatScheduled, typeNames } from './reset-helpers';
import { waitUntil } from '../support/wait-until';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/reset'), activities: { step } });
});
afterAll(async () => {
  await env?.teardown();
});

const runOf = (workflowId: string, runId?: string) => env.client.workflow.getHandle(workflowId, runId);

test('a child started before the reset point stays: the old run does not end it, and its result reaches the new run', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('reset-parent');
    const h = await env.client.workflow.start(parentOfWaiter, { taskQueue: env.taskQueue, workflowId });
    const base = await settled(h, 1);
    const runId = await reset(env, workflowId, taskThatScheduled(base, 'a'));
    const child = runOf(`${workflowId}-child`);
    // The old run's parent close policy (terminate) is not applied: the new run has the child.
    expect((await runOf(workflowId, h.firstExecutionRunId).describe()).status.name).toBe('TERMINATED');
    const childRun = await child.describe();
    expect(childRun.status.name).toBe('RUNNING');
    const described = await env.connection.workflowService.describeWorkflowExecution({
      namespace: env.namespace,
      execution: { workflowId, runId },
    });
    expect(described.pendingChildren?.map((c) => [c.workflowId, c.runId])).toEqual([
      [`${workflowId}-child`, childRun.runId],
    ]);
    await settled(runOf(workflowId, runId), 1);
    await child.signal(finishSignal);
    const fresh = runOf(workflowId, runId);
    expect(await fresh.result()).toBe(`child ${workflowId}-child`);
    expect(typeNames((await fresh.fetchHistory()).events!)).toContain('CHILD_WORKFLOW_EXECUTION_COMPLETED');
    expect(timesRun(workflowId, 'a')).toBe(2);
    await env.replay(fresh);
  });
});

test('resetting an earlier run of a continue-as-new chain ends the current run and reapplies its signals', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('reset-chain');
    const h = await env.client.workflow.start(continuesOnce, { taskQueue: env.taskQueue, workflowId, args: [false] });
    const first = h.firstExecutionRunId;
    const secondRunId = await waitUntil('the run to continue as new', async () => {
      const { runId } = await runOf(workflowId).describe();
      return runId !== first && runId;
    });
    const second = runOf(workflowId, secondRunId);
    await settled(second, 1);
    await second.signal(noteSignal, 'late');
    await settled(second, 1, 1);
    const firstEvents = (await runOf(workflowId, first).fetchHistory()).events!;
    const finish = taskThatScheduled(firstEvents, 'a');
    const runId = await reset(env, workflowId, finish, { runId: first, reason: 'back to the first run' });

    const ended = (await second.fetchHistory()).events!;
    expect(ended[ended.length - 1].workflowExecutionTerminatedEventAttributes).toEqual({
      reason: 'back to the first run',
      identity: 'history-resetter',
    });
    // The first run of the chain is left as it was (continued as new): only the current run ends.
    expect((await runOf(workflowId, first).describe()).status.name).toBe('CONTINUED_AS_NEW');
    const events = (await runOf(workflowId, runId).fetchHistory()).events!;
    expect(typeNames(events.slice(finish - 1, finish + 2))).toEqual([
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_EXECUTION_SIGNALED',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
    expect(signalsIn(events)).toEqual(['note:late']);
    // The new run goes on as the first did: step a, then a new run of the chain.
    const third = await waitUntil('the new run to continue as new', async () => {
      const current = await runOf(workflowId).describe();
      return ![first, secondRunId, runId].includes(current.runId) && runOf(workflowId, current.runId);
    });
    await third.signal(finishSignal);
    expect(await third.result()).toEqual(['a']);
    await env.replay(runOf(workflowId, runId));
  });
});
