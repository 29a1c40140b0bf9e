// ResetWorkflowExecution's refusals, each in the real server's words: an unknown workflow or run,
// an event id that ends no workflow task (out of range, inside a batch of events written together,
// or where no task is open), no request id, an empty post-reset operation. The resets themselves:
// reset.engine.test.ts.
import { randomUUID } from 'node:crypto';
import { createEnv, Env, uid } from './harness';
import { steps } from './workflows/reset';
import { step } from './activities/reset';
import { expectStatus } from './errors-helpers';
import { S, outcome } from './fuzz-tools';
import { ResetOptions, exactly, resetCall } from './reset-helpers';

const FINISH_OUT_OF_RANGE = 'Workflow task finish ID must be > 1 && <= workflow last event ID.';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/reset'), activities: { step } });
});
afterAll(async () => {
  await env?.teardown();
});

const describeRaw = (workflowId: string) =>
  env.connection.workflowService.describeWorkflowExecution({ namespace: env.namespace, execution: { workflowId } });

describe('bad requests get the real server’s answer', () => {
  test('an unknown workflow or run: NOT_FOUND', async () => {
    const workflowId = uid('reset-missing');
    const runId = randomUUID();
    expectStatus(
      await outcome(resetCall(env, workflowId, 4)),
      S.NOT_FOUND,
      exactly(`workflow not found for ID: ${workflowId}`),
    );
    expectStatus(
      await outcome(resetCall(env, workflowId, 4, { runId })),
      S.NOT_FOUND,
      exactly(`workflow execution not found for workflow ID "${workflowId}" and run ID "${runId}"`),
    );
  });

  test('an event id that ends no workflow task, no request id, an empty operation: INVALID_ARGUMENT', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(steps, {
        taskQueue: env.taskQueue,
        workflowId: uid('reset-bad-id'),
        args: [false],
      });
      await h.result();
      const events = (await h.fetchHistory()).events!;
      const scheduledA = Number(events.find((e) => e.activityTaskScheduledEventAttributes)!.eventId);
      const last = events.length;
      const refused = async (id: number, message: string, options?: ResetOptions) =>
        expectStatus(await outcome(resetCall(env, h.workflowId, id, options)), S.INVALID_ARGUMENT, exactly(message));
      await refused(0, FINISH_OUT_OF_RANGE);
      await refused(1, FINISH_OUT_OF_RANGE);
      await refused(last + 1, FINISH_OUT_OF_RANGE);
      // The task's completion and the commands after it are written together: no rebuilding in between.
      const boundary = (id: number) =>
        `StateRebuilder unable to Rebuild mutable state to event ID: ${id}, version: 0, this event must be at the boundary`;
      await refused(scheduledA, boundary(scheduledA - 1));
      await refused(last, boundary(last - 1));
      // Rebuilt to the activity's scheduled event, the run has no workflow task open.
      await refused(
        scheduledA + 1,
        `Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, WorkflowTaskStarted + 1]: ${scheduledA + 1}`,
      );
      await refused(4, 'RequestId is not set on request.', { requestId: '' });
      await refused(4, 'unsupported post reset operation: <nil>', { postResetOperations: [{}] });
      // None of them made a run.
      expect((await describeRaw(h.workflowId)).workflowExecutionInfo?.execution?.runId).toBe(h.firstExecutionRunId);
    });
  });
});
