// Child workflows and workflows acting on other workflows: every close outcome
// reported to the parent, start conflicts, parent close policies, cancelling and
// signalling children, external signal and cancel.
import { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid, eventTypes } from './harness';
import {
  parentOf,
  parentCancelsChild,
  duplicateChild,
  parentWithPolicy,
  parentWaiting,
  parentSignalsChild,
  external,
  collector,
  cancelAware,
  child,
  parentOfChain,
  finishSignal,
  stateQuery,
} from './workflows/children';

const ET = temporal.api.enums.v1.EventType;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/children') });
});
afterAll(async () => {
  await env?.teardown();
});

async function statusOf(workflowId: string): Promise<string> {
  return (await env.client.workflow.getHandle(workflowId).describe()).status.name;
}

describe('child close outcomes reach the parent', () => {
  test('completed', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-complete');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentOf, {
        args: ['complete', childId],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      expect(await h.result()).toBe(`ok:child:${parentId}`);
      const types = await eventTypes(h);
      expect(types).toContain(ET.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
      expect(types).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED);
      expect(types).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED);
      const childDesc = await env.client.workflow.getHandle(childId).describe();
      expect(childDesc.parentExecution?.workflowId).toBe(parentId);
      expect(childDesc.rootExecution?.workflowId).toBe(parentId);
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(childId));
    });
  });

  test('failed', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-fail');
      const h = await env.client.workflow.start(parentOf, {
        args: ['fail', `${parentId}-child`],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      expect(await h.result()).toBe('failed:ChildError:child failed');
      expect(await eventTypes(h)).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED);
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(`${parentId}-child`));
    });
  });

  test('canceled (cancelled through the child handle by a client)', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-canceled');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentOf, {
        args: ['wait', childId],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      await waitUntil(
        'the child to be running',
        () => statusOf(childId),
        (status) => status === 'RUNNING',
      );
      await env.client.workflow.getHandle(childId).cancel();
      expect(await h.result()).toBe('canceled');
      expect(await eventTypes(h)).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED);
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(childId));
    });
  });

  test('terminated', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-terminated');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentOf, {
        args: ['wait', childId],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      await waitUntil(
        'the child to be running',
        () => statusOf(childId),
        (status) => status === 'RUNNING',
      );
      await env.client.workflow.getHandle(childId).terminate('stop child');
      expect(await h.result()).toBe('terminated');
      expect(await eventTypes(h)).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED);
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(childId));
    });
  });

  test('timed out', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-timeout');
      const started = Date.now();
      const h = await env.client.workflow.start(parentOf, {
        args: ['wait', `${parentId}-child`, 1000],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      expect(await h.result()).toBe('timed-out:START_TO_CLOSE');
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(await eventTypes(h)).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT);
      expect(await statusOf(`${parentId}-child`)).toBe('TIMED_OUT');
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(`${parentId}-child`));
    });
  });

  test('a child that continues as new is followed to the end of its chain', async () => {
    await env.withWorker(async () => {
      const parentId = uid('parent-chain');
      const h = await env.client.workflow.start(parentOfChain, {
        args: [`${parentId}-child`],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      expect(await h.result()).toBe('chain-end:continued');
      const types = await eventTypes(h);
      expect(types.filter((t) => t === ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)).toHaveLength(1);
      await env.replay(h);
      // Every run of the child's chain, first to last.
      let runId: string | undefined =
        (await env.client.workflow.getHandle(`${parentId}-child`).describe()).raw.workflowExecutionInfo?.firstRunId ??
        undefined;
      let runs = 0;
      while (runId) {
        const run: WorkflowHandle = env.client.workflow.getHandle(`${parentId}-child`, runId);
        await env.replay(run);
        runs++;
        const last = (await run.fetchHistory()).events!.at(-1)!;
        runId = last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
      expect(runs).toBe(3);
    });
  });
});

test('the parent cancels its own child', async () => {
  await env.withWorker(async () => {
    const parentId = uid('parent-cancels');
    const childId = `${parentId}-child`;
    const h = await env.client.workflow.start(parentCancelsChild, {
      args: [childId],
      taskQueue: env.taskQueue,
      workflowId: parentId,
    });
    expect(await h.result()).toBe('canceled');
    const types = await eventTypes(h);
    expect(types).toContain(ET.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED);
    expect(types).toContain(ET.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
    expect(types).toContain(ET.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED);
    expect(await statusOf(childId)).toBe('CANCELLED');
    await env.replay(h);
    await env.replay(env.client.workflow.getHandle(childId));
  });
});

test('starting a child whose id is running fails in the parent with WorkflowExecutionAlreadyStartedError', async () => {
  await env.withWorker(async () => {
    const parentId = uid('parent-dup');
    const childId = `${parentId}-child`;
    const h = await env.client.workflow.start(duplicateChild, {
      args: [childId],
      taskQueue: env.taskQueue,
      workflowId: parentId,
    });
    expect(await h.result()).toBe(`already-started:${childId}`);
    expect(await eventTypes(h)).toContain(ET.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED);
    await env.replay(h);
    // The first child is terminated by the default parent close policy.
    await waitUntil(
      'the child to be terminated',
      () => statusOf(childId),
      (status) => status === 'TERMINATED',
    );
    await env.replay(env.client.workflow.getHandle(childId));
  });
});

describe('parent close policies', () => {
  test('TERMINATE (the default) terminates the child', async () => {
    await env.withWorker(async () => {
      const parentId = uid('pcp-terminate');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentWithPolicy, {
        args: ['collector', childId, 'TERMINATE'],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      await h.result();
      await waitUntil(
        'the child to be terminated',
        () => statusOf(childId),
        (status) => status === 'TERMINATED',
      );
      const last = (await env.client.workflow.getHandle(childId).fetchHistory()).events!.at(-1)!;
      expect(last.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
      await env.replay(h);
      await env.replay(env.client.workflow.getHandle(childId));
    });
  });

  test('REQUEST_CANCEL asks the child to cancel', async () => {
    await env.withWorker(async () => {
      const parentId = uid('pcp-cancel');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentWithPolicy, {
        args: ['cancelAware', childId, 'REQUEST_CANCEL'],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      await h.result();
      const ch = env.client.workflow.getHandle<typeof cancelAware>(childId);
      expect(await ch.result()).toBe('saw-cancel');
      const events = (await ch.fetchHistory()).events!;
      const req = events.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED)!;
      expect(req.workflowExecutionCancelRequestedEventAttributes?.externalWorkflowExecution?.workflowId).toBe(parentId);
      expect(await ch.query(stateQuery)).toBe('cancelled');
      await env.replay(h);
      await env.replay(ch);
    });
  });

  test('ABANDON leaves the child running', async () => {
    await env.withWorker(async () => {
      const parentId = uid('pcp-abandon');
      const childId = `${parentId}-child`;
      const h = await env.client.workflow.start(parentWithPolicy, {
        args: ['collector', childId, 'ABANDON'],
        taskQueue: env.taskQueue,
        workflowId: parentId,
      });
      await h.result();
      // Time let pass on purpose: a close policy acts after the parent closed (TERMINATE's within
      // moments, above); ABANDON's must leave the child running.
      await new Promise((r) => setTimeout(r, 500));
      expect(await statusOf(childId)).toBe('RUNNING');
      const ch = env.client.workflow.getHandle<typeof collector>(childId);
      await ch.signal(finishSignal);
      expect(await ch.result()).toEqual([]);
      await env.replay(h);
      await env.replay(ch);
    });
  });
});

test('describe lists pending children of a running parent', async () => {
  await env.withWorker(async () => {
    const parentId = uid('parent-describe');
    const childId = `${parentId}-child`;
    const h = await env.client.workflow.start(parentWaiting, {
      args: [childId],
      taskQueue: env.taskQueue,
      workflowId: parentId,
    });
    await waitUntil(
      'the child to be running',
      () => statusOf(childId),
      (status) => status === 'RUNNING',
    );
    const desc = await h.describe();
    const pending = desc.raw.pendingChildren ?? [];
    expect(pending).toHaveLength(1);
    expect(pending[0].workflowId).toBe(childId);
    expect(pending[0].workflowTypeName).toBe('collector');
    expect(pending[0].runId).toBe((await env.client.workflow.getHandle(childId).describe()).runId);
    await h.signal(finishSignal);
    expect(await h.result()).toBe('');
    expect((await h.describe()).raw.pendingChildren ?? []).toHaveLength(0);
    await env.replay(h);
    await env.replay(env.client.workflow.getHandle(childId));
  });
});

test('the parent signals its child', async () => {
  await env.withWorker(async () => {
    const parentId = uid('parent-signals');
    const h = await env.client.workflow.start(parentSignalsChild, {
      args: [`${parentId}-child`],
      taskQueue: env.taskQueue,
      workflowId: parentId,
    });
    expect(await h.result()).toEqual(['from-parent']);
    const types = await eventTypes(h);
    expect(types.filter((t) => t === ET.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED)).toHaveLength(2);
    await env.replay(h);
    await env.replay(env.client.workflow.getHandle(`${parentId}-child`));
  });
});

describe('external workflows', () => {
  test('signal reaches another running workflow', async () => {
    await env.withWorker(async () => {
      const target = await env.client.workflow.start(collector, {
        taskQueue: env.taskQueue,
        workflowId: uid('ext-target'),
      });
      const h = await env.client.workflow.start(external, {
        args: [target.workflowId, 'signal'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-signaller'),
      });
      expect(await h.result()).toBe('delivered');
      expect(await target.result()).toEqual(['external']);
      const signaled = (await target.fetchHistory()).events!.find(
        (e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
      )!;
      expect(signaled.workflowExecutionSignaledEventAttributes?.externalWorkflowExecution?.workflowId).toBe(
        h.workflowId,
      );
      await env.replay(h);
      await env.replay(target);
    });
  });

  test('cancel reaches another running workflow', async () => {
    await env.withWorker(async () => {
      const target = await env.client.workflow.start(cancelAware, {
        taskQueue: env.taskQueue,
        workflowId: uid('ext-cancel-target'),
      });
      const h = await env.client.workflow.start(external, {
        args: [target.workflowId, 'cancel'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-canceller'),
      });
      expect(await h.result()).toBe('delivered');
      expect(await target.result()).toBe('saw-cancel');
      await env.replay(h);
      await env.replay(target);
    });
  });

  test('signalling or cancelling a workflow that does not exist fails inside the workflow', async () => {
    await env.withWorker(async () => {
      const missing = uid('missing');
      const s = await env.client.workflow.start(external, {
        args: [missing, 'signal'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-signal-missing'),
      });
      expect(await s.result()).toMatch(/^error:.*not found/);
      expect(await eventTypes(s)).toContain(ET.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED);
      const c = await env.client.workflow.start(external, {
        args: [missing, 'cancel'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-cancel-missing'),
      });
      expect(await c.result()).toMatch(/^error:.*not found/);
      expect(await eventTypes(c)).toContain(ET.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED);
      await env.replay(s);
      await env.replay(c);
    });
  });

  test('signalling a workflow that has completed fails inside the workflow; cancelling it succeeds', async () => {
    await env.withWorker(async () => {
      const done = await env.client.workflow.start(child, {
        args: ['complete'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-closed'),
      });
      await done.result();
      const s = await env.client.workflow.start(external, {
        args: [done.workflowId, 'signal'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-signal-closed'),
      });
      expect(await s.result()).toMatch(/^error:.*not found/);
      const c = await env.client.workflow.start(external, {
        args: [done.workflowId, 'cancel'],
        taskQueue: env.taskQueue,
        workflowId: uid('ext-cancel-closed'),
      });
      expect(await c.result()).toBe('delivered');
      expect(await eventTypes(c)).toContain(ET.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
      expect(await eventTypes(done)).not.toContain(ET.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
      await env.replay(s);
      await env.replay(c);
      await env.replay(done);
    });
  });
});
