// Starting workflows: request-id de-duplication, workflow-id reuse and conflict
// policies, signal-with-start, start delay. Cancellation and termination:
// cancel-terminate.engine.test.ts.
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import { TerminatedFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, uid, eventTypes, lastEvent } from './harness';
import { collector, quick, failing, pushSignal, finishSignal, seenQuery } from './workflows/start-policies';

const ET = temporal.api.enums.v1.EventType;
const Status = temporal.api.enums.v1.WorkflowExecutionStatus;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/start-policies') });
});
afterAll(async () => {
  await env?.teardown();
});

function run(workflowId: string, runId: string): WorkflowHandle {
  return env.client.workflow.getHandle(workflowId, runId);
}

test('a retried start request (same request id) gets the same run, and only one run exists', async () => {
  const workflowId = uid('dedupe');
  const requestId = randomUUID();
  const req = {
    namespace: env.namespace,
    workflowId,
    workflowType: { name: 'collector' },
    taskQueue: { name: env.taskQueue },
    requestId,
    identity: 'conformance',
  };
  const first = await env.connection.workflowService.startWorkflowExecution(req);
  const second = await env.connection.workflowService.startWorkflowExecution(req);
  expect(second.runId).toBe(first.runId);
  expect(first.started).toBe(true);
  // The real server reports a retried start as started too: the client cannot tell it apart.
  expect(second.started).toBe(true);
  // A different request id for the running id is a conflict, not a retry.
  const conflict = await env.connection.workflowService
    .startWorkflowExecution({ ...req, requestId: randomUUID() })
    .catch((e) => e);
  expect(conflict.code).toBe(6); // ALREADY_EXISTS

  await env.withWorker(async () => {
    const h = env.client.workflow.getHandle<typeof collector>(workflowId);
    await h.signal(finishSignal);
    expect(await h.result()).toEqual([]);
    const types = await eventTypes(h);
    expect(types.filter((t) => t === ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)).toHaveLength(1);
    expect((await h.describe()).runId).toBe(first.runId);
    await env.replay(h);
  });
});

describe('workflow id reuse policy (closed runs)', () => {
  test('ALLOW_DUPLICATE starts a new run after completion', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('allow');
      const h1 = await env.client.workflow.start(quick, { args: ['one'], taskQueue: env.taskQueue, workflowId });
      expect(await h1.result()).toBe('one');
      const h2 = await env.client.workflow.start(quick, {
        args: ['two'],
        taskQueue: env.taskQueue,
        workflowId,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      expect(h2.firstExecutionRunId).not.toBe(h1.firstExecutionRunId);
      expect(await h2.result()).toBe('two');
      await env.replay(run(workflowId, h1.firstExecutionRunId));
      await env.replay(run(workflowId, h2.firstExecutionRunId));
    });
  });

  test('ALLOW_DUPLICATE_FAILED_ONLY refuses after success, allows after failure or termination', async () => {
    await env.withWorker(async () => {
      const okId = uid('failed-only-ok');
      const ok = await env.client.workflow.start(quick, { args: ['x'], taskQueue: env.taskQueue, workflowId: okId });
      await ok.result();
      const refused = await env.client.workflow
        .start(quick, {
          args: ['y'],
          taskQueue: env.taskQueue,
          workflowId: okId,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        })
        .catch((e) => e);
      expect(refused).toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
      await env.replay(ok);

      const badId = uid('failed-only-bad');
      const bad = await env.client.workflow.start(failing, {
        args: ['no'],
        taskQueue: env.taskQueue,
        workflowId: badId,
      });
      await expect(bad.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const again = await env.client.workflow.start(quick, {
        args: ['again'],
        taskQueue: env.taskQueue,
        workflowId: badId,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
      expect(await again.result()).toBe('again');
      await env.replay(run(badId, bad.firstExecutionRunId));
      await env.replay(again);

      const termId = uid('failed-only-term');
      const term = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId: termId });
      await term.terminate('stop');
      const after = await env.client.workflow.start(quick, {
        args: ['after'],
        taskQueue: env.taskQueue,
        workflowId: termId,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
      expect(await after.result()).toBe('after');
      await env.replay(run(termId, term.firstExecutionRunId));
      await env.replay(after);
    });
  });

  test('REJECT_DUPLICATE refuses after any close', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('reject');
      const h = await env.client.workflow.start(failing, { args: ['f'], taskQueue: env.taskQueue, workflowId });
      await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const err = await env.client.workflow
        .start(quick, { args: ['z'], taskQueue: env.taskQueue, workflowId, workflowIdReusePolicy: 'REJECT_DUPLICATE' })
        .catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
      expect(err.workflowId).toBe(workflowId);
      await env.replay(h);
    });
  });

  test('TERMINATE_IF_RUNNING terminates the running run and starts a new one', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('terminate-if-running');
      const h1 = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      expect(await h1.query(seenQuery)).toEqual([]);
      const h2 = await env.client.workflow.start(quick, {
        args: ['new'],
        taskQueue: env.taskQueue,
        workflowId,
        workflowIdReusePolicy: 'TERMINATE_IF_RUNNING',
      });
      expect(await h2.result()).toBe('new');
      const old = run(workflowId, h1.firstExecutionRunId);
      expect((await old.describe()).status.name).toBe('TERMINATED');
      expect((await lastEvent(old)).eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
      await env.replay(old);
      await env.replay(h2);
    });
  });
});

describe('workflow id conflict policy (running run)', () => {
  test('FAIL rejects a second start with WorkflowExecutionAlreadyStartedError', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('conflict-fail');
      const h = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      const err = await env.client.workflow
        .start(collector, { taskQueue: env.taskQueue, workflowId, workflowIdConflictPolicy: 'FAIL' })
        .catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
      // Closed runs do not conflict: the default reuse policy allows a new run.
      await h.signal(finishSignal);
      await h.result();
      const h2 = await env.client.workflow.start(quick, {
        args: ['next'],
        taskQueue: env.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'FAIL',
      });
      expect(await h2.result()).toBe('next');
      await env.replay(run(workflowId, h.firstExecutionRunId));
      await env.replay(h2);
    });
  });

  test('USE_EXISTING returns the running run', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('conflict-use');
      const h1 = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      const h2 = await env.client.workflow.start(collector, {
        taskQueue: env.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      expect(h2.firstExecutionRunId).toBe(h1.firstExecutionRunId);
      await h2.signal(pushSignal, 'via-second-handle');
      await h1.signal(finishSignal);
      expect(await h1.result()).toEqual(['via-second-handle']);
      const types = await eventTypes(h1);
      expect(types.filter((t) => t === ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)).toHaveLength(1);
      await env.replay(h1);
    });
  });

  test('TERMINATE_EXISTING terminates the running run and starts a new one', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('conflict-terminate');
      const h1 = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      const h2 = await env.client.workflow.start(quick, {
        args: ['replacement'],
        taskQueue: env.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      });
      expect(h2.firstExecutionRunId).not.toBe(h1.firstExecutionRunId);
      expect(await h2.result()).toBe('replacement');
      const old = run(workflowId, h1.firstExecutionRunId);
      const err = await old.result().catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(err.cause).toBeInstanceOf(TerminatedFailure);
      await env.replay(old);
      await env.replay(h2);
    });
  });
});

test('incompatible reuse and conflict policies are refused', async () => {
  const workflowId = uid('bad-policies');
  const a = await env.client.workflow
    .start(quick, {
      args: ['x'],
      taskQueue: env.taskQueue,
      workflowId,
      workflowIdReusePolicy: 'TERMINATE_IF_RUNNING',
      workflowIdConflictPolicy: 'FAIL',
    })
    .catch((e) => e);
  expect(String(a.cause?.details ?? a.message)).toMatch(/TERMINATE_IF_RUNNING cannot be used together/);
  const b = await env.client.workflow
    .start(quick, {
      args: ['x'],
      taskQueue: env.taskQueue,
      workflowId,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    })
    .catch((e) => e);
  expect(String(b.cause?.details ?? b.message)).toMatch(/REJECT_DUPLICATE cannot be used together/);
  const c = await env.client.workflow
    .signalWithStart(collector, {
      taskQueue: env.taskQueue,
      workflowId,
      signal: pushSignal,
      signalArgs: ['x'],
      workflowIdConflictPolicy: 'FAIL',
    })
    .catch((e) => e);
  expect(String(c.cause?.details ?? c.message)).toMatch(/WORKFLOW_ID_CONFLICT_POLICY_FAIL is not supported/);
  // Nothing was started.
  await expect(env.client.workflow.getHandle(workflowId).describe()).rejects.toThrow();
});

describe('signal with start', () => {
  test('starts a workflow that is not running, with the signal before its first task', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('sws-new');
      const h = await env.client.workflow.signalWithStart(collector, {
        taskQueue: env.taskQueue,
        workflowId,
        signal: pushSignal,
        signalArgs: ['first'],
      });
      await h.signal(finishSignal);
      expect(await h.result()).toEqual(['first']);
      const types = await eventTypes(h);
      expect(types.slice(0, 3)).toEqual([
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ]);
      await env.replay(h);
    });
  });

  test('signals the running workflow instead of starting another', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('sws-running');
      const h1 = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      const h2 = await env.client.workflow.signalWithStart(collector, {
        taskQueue: env.taskQueue,
        workflowId,
        signal: pushSignal,
        signalArgs: ['second'],
      });
      expect(h2.signaledRunId).toBe(h1.firstExecutionRunId);
      await h1.signal(finishSignal);
      expect(await h1.result()).toEqual(['second']);
      await env.replay(h1);
    });
  });

  test('TERMINATE_EXISTING replaces the running workflow with a new signalled one', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('sws-terminate');
      const h1 = await env.client.workflow.start(collector, { taskQueue: env.taskQueue, workflowId });
      const h2 = await env.client.workflow.signalWithStart(collector, {
        taskQueue: env.taskQueue,
        workflowId,
        signal: pushSignal,
        signalArgs: ['fresh'],
        workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      });
      expect(h2.signaledRunId).not.toBe(h1.firstExecutionRunId);
      await h2.signal(finishSignal);
      expect(await h2.result()).toEqual(['fresh']);
      expect((await run(workflowId, h1.firstExecutionRunId).describe()).status.code).toBe(
        Status.WORKFLOW_EXECUTION_STATUS_TERMINATED,
      );
      await env.replay(run(workflowId, h1.firstExecutionRunId));
      await env.replay(h2);
    });
  });
});

test('a start delay holds the first workflow task back and is recorded in history', async () => {
  await env.withWorker(async () => {
    const started = Date.now();
    const h = await env.client.workflow.start(quick, {
      args: ['late'],
      taskQueue: env.taskQueue,
      workflowId: uid('delay'),
      startDelay: '2s',
    });
    // Signals during the delay are recorded but do not cut it short.
    await h.signal(pushSignal, 'early');
    expect(await h.result()).toBe('late');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    const events = (await h.fetchHistory()).events!;
    const attrs = events[0].workflowExecutionStartedEventAttributes!;
    expect(Number(attrs.firstWorkflowTaskBackoff?.seconds)).toBe(2);
    expect(events[1].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    const desc = await h.describe();
    expect(desc.executionTime!.getTime() - desc.startTime.getTime()).toBeGreaterThanOrEqual(2000);
    await env.replay(h);
  });
});
