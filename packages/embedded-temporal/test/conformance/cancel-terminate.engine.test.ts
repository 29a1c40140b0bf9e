// Cancelling and terminating a workflow through the SDK: what the workflow sees, how the run
// closes, and a cancel during a start delay. Starting workflows: start-policies.engine.test.ts.
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, uid, eventTypes, lastEvent } from './harness';
import { collector, cancelAware, cancelPropagating, pushSignal, seenQuery } from './workflows/start-policies';

const ET = temporal.api.enums.v1.EventType;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/start-policies') });
});
afterAll(async () => {
  await env?.teardown();
});

describe('cancellation', () => {
  test('the workflow sees the cancellation; repeating the request is harmless', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(cancelAware, {
        taskQueue: env.taskQueue,
        workflowId: uid('cancel-aware'),
      });
      await h.cancel();
      await h.cancel();
      expect(await h.result()).toBe('saw-cancel');
      const types = await eventTypes(h);
      expect(types.filter((t) => t === ET.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED)).toHaveLength(1);
      expect((await h.describe()).status.name).toBe('COMPLETED');
      await env.replay(h);
    });
  });

  test('an unhandled cancellation closes the run as CANCELED', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(cancelPropagating, {
        taskQueue: env.taskQueue,
        workflowId: uid('cancel-prop'),
      });
      await h.cancel();
      const err = await h.result().catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(err.cause).toBeInstanceOf(CancelledFailure);
      expect((await h.describe()).status.name).toBe('CANCELLED');
      expect((await lastEvent(h)).eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED);
      // Cancelling a closed run succeeds and changes nothing.
      const length = (await h.fetchHistory()).events!.length;
      await h.cancel();
      expect((await h.fetchHistory()).events!.length).toBe(length);
      await env.replay(h);
    });
  });
});

test('a cancel request does not wait for the start delay', async () => {
  await env.withWorker(async () => {
    // The delay is an hour: a cancel that waited for it would keep the test past jest's timeout.
    const h = await env.client.workflow.start(cancelAware, {
      taskQueue: env.taskQueue,
      workflowId: uid('cancel-delayed'),
      startDelay: '1h',
    });
    await h.cancel();
    expect(await h.result()).toBe('saw-cancel');
    const events = (await h.fetchHistory()).events!;
    expect(Number(events[0].workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff?.seconds)).toBe(3600);
    expect(events[1].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
    await env.replay(h);
  });
});

test('terminate records the reason and fails result() with TerminatedFailure', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId: uid('terminate') });
    await h.signal(pushSignal, 'before');
    expect(await h.query(seenQuery)).toEqual(['before']);
    await h.terminate('enough');
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(err.cause).toBeInstanceOf(TerminatedFailure);
    expect(err.cause.message).toBe('enough');
    const last = await lastEvent(h);
    expect(last.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
    expect(last.workflowExecutionTerminatedEventAttributes?.reason).toBe('enough');
    const desc = await h.describe();
    expect(desc.status.name).toBe('TERMINATED');
    expect(desc.closeTime).toBeInstanceOf(Date);
    await expect(h.terminate('again')).rejects.toThrow();
    await env.replay(h);
  });
});
