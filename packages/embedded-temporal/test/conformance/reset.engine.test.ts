// ResetWorkflowExecution: a new run of the workflow that goes on from just before one of its
// workflow tasks. Its history (the base run's events up to that task's started event, the task
// failed by the reset, what is reapplied, a new task), the old run's end, the signals and updates
// carried over, the request id, and the SDK's replay of the new run. Where the real server
// (Temporal Server 1.32, the CLI 1.9.1's) differs on purpose, the test says so and why. Its
// errors: reset-errors.engine.test.ts; children and continue-as-new chains:
// reset-related-runs.engine.test.ts.
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, ON_REAL_SERVER, uid } from './harness';
import { finishSignal, noteSignal, noteUpdate, steps } from './workflows/reset';
import { holdNextRun, step, timesRun } from './activities/reset';
import { expectStatus } from './errors-helpers';
import { S, outcome } from './fuzz-tools';
import {
  EXCLUDE,
  REAPPLY,
  ResetOptions,
  exactly,
  json,
  lastTaskCompleted,
  reset,
  resetCall,
  settled,
  signalsIn,
  taskThatScheduled,
  typeNames,
} from './reset-helpers';
import { waitUntil } from '../support/wait-until';

const RESET_WORKFLOW = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/reset'), activities: { step } });
});
afterAll(async () => {
  await env?.teardown();
});

const start = (waitForFinish: boolean, prefix: string, workflowId = uid(prefix)) =>
  env.client.workflow.start(steps, { taskQueue: env.taskQueue, workflowId, args: [waitForFinish] });
const runOf = (workflowId: string, runId: string) => env.client.workflow.getHandle(workflowId, runId);
const describeRaw = (workflowId: string, runId?: string) =>
  env.connection.workflowService.describeWorkflowExecution({
    namespace: env.namespace,
    execution: { workflowId, runId },
  });

test('a running workflow reset to a mid-history task runs again from there; the old run is terminated and kept', async () => {
  await env.withWorker(async () => {
    const h = await start(true, 'reset-running');
    const baseRunId = h.firstExecutionRunId;
    const base = await settled(h, 2);
    const finish = taskThatScheduled(base, 'b');
    const runId = await reset(env, h.workflowId, finish, { reason: 'rewind' });
    expect(runId).not.toBe(baseRunId);

    // The base run ends terminated by the resetter; its history stays readable by its run id.
    const old = (await runOf(h.workflowId, baseRunId).fetchHistory()).events!;
    expect(typeNames(old)).toEqual([...typeNames(base), 'WORKFLOW_EXECUTION_TERMINATED']);
    expect(old[old.length - 1].workflowExecutionTerminatedEventAttributes).toEqual({
      reason: 'rewind',
      identity: 'history-resetter',
    });

    // The new run: the base run's events up to the task's started event, that task failed by the
    // reset, and a new task.
    const fresh = runOf(h.workflowId, runId);
    const events = (await fresh.fetchHistory()).events!;
    expect(events.slice(0, finish - 1)).toEqual(base.slice(0, finish - 1));
    expect(typeNames(events.slice(finish - 1, finish + 1))).toEqual([
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
    const failed = events[finish - 1].workflowTaskFailedEventAttributes!;
    expect(failed).toMatchObject({
      cause: RESET_WORKFLOW,
      identity: 'history-service',
      baseRunId,
      newRunId: runId,
      failure: { message: 'rewind', resetWorkflowFailureInfo: {} },
    });
    expect([Number(failed.scheduledEventId), Number(failed.startedEventId)]).toEqual([finish - 2, finish - 1]);

    // The new run is the current one, running; the base run names it.
    const current = await describeRaw(h.workflowId);
    expect(current.workflowExecutionInfo?.execution?.runId).toBe(runId);
    expect((await fresh.describe()).status.name).toBe('RUNNING');
    expect(current.workflowExecutionInfo?.firstRunId).toBe(baseRunId);
    expect(current.workflowExtendedInfo?.lastResetTime).toBeTruthy();
    const old2 = await describeRaw(h.workflowId, baseRunId);
    expect(old2.workflowExtendedInfo?.resetRunId).toBe(runId);
    expect((await runOf(h.workflowId, baseRunId).describe()).status.name).toBe('TERMINATED');
    const running = async () => {
      const ids: string[] = [];
      for await (const w of env.client.workflow.list({
        query: `WorkflowId = '${h.workflowId}' AND ExecutionStatus = 'Running'`,
      }))
        ids.push(w.runId);
      return ids;
    };
    await waitUntil('the list to show the new run, running', running, (ids) => ids.join() === runId);

    // Step b runs again, step a does not.
    await settled(fresh, 2);
    expect([timesRun(h.workflowId, 'a'), timesRun(h.workflowId, 'b')]).toEqual([1, 2]);
    await fresh.signal(finishSignal);
    expect(await fresh.result()).toEqual(['a', 'b(after a)']);
    await env.replay(fresh);
    await env.replay(runOf(h.workflowId, baseRunId));
  });
});

test('a completed workflow can be reset: the new run becomes the current one and completes again', async () => {
  await env.withWorker(async () => {
    const h = await start(false, 'reset-completed');
    expect(await h.result()).toEqual(['a', 'b(after a)']);
    const base = (await h.fetchHistory()).events!;
    const finish = taskThatScheduled(base, 'b');
    const runId = await reset(env, h.workflowId, finish);
    const current = env.client.workflow.getHandle(h.workflowId);
    expect(await current.result()).toEqual(['a', 'b(after a)']);
    expect((await current.describe()).runId).toBe(runId);
    const events = (await runOf(h.workflowId, runId).fetchHistory()).events!;
    expect(typeNames(events)).toEqual([
      ...typeNames(base.slice(0, finish - 1)),
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'ACTIVITY_TASK_SCHEDULED',
      'ACTIVITY_TASK_STARTED',
      'ACTIVITY_TASK_COMPLETED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'WORKFLOW_EXECUTION_COMPLETED',
    ]);
    // A closed base run is left as it was, but for the link to its reset.
    expect((await runOf(h.workflowId, h.firstExecutionRunId).fetchHistory()).events).toEqual(base);
    expect((await runOf(h.workflowId, h.firstExecutionRunId).describe()).status.name).toBe('COMPLETED');
    expect((await describeRaw(h.workflowId, h.firstExecutionRunId)).workflowExtendedInfo?.resetRunId).toBe(runId);
    expect(timesRun(h.workflowId, 'b')).toBe(2);
    await env.replay(runOf(h.workflowId, runId));
  });
});

test('a reset to a task that was only scheduled records it started by the server, then failed', async () => {
  await env.withWorker(async () => {
    const h = await start(false, 'reset-scheduled');
    await h.result();
    // Event 3 is the first task's started event: the run is rebuilt to its scheduled event.
    const runId = await reset(env, h.workflowId, 3);
    const fresh = runOf(h.workflowId, runId);
    expect(await fresh.result()).toEqual(['a', 'b(after a)']);
    const events = (await fresh.fetchHistory()).events!;
    expect(typeNames(events.slice(0, 5))).toEqual([
      'WORKFLOW_EXECUTION_STARTED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
    const started = events[2].workflowTaskStartedEventAttributes!;
    expect([Number(started.scheduledEventId), started.identity]).toEqual([2, 'history-service']);
    expect([timesRun(h.workflowId, 'a'), timesRun(h.workflowId, 'b')]).toEqual([2, 2]);
    await env.replay(fresh);
  });
});

describe('signals received after the reset point', () => {
  const cases: [string, ResetOptions, boolean][] = [
    ['are reapplied by default', {}, true],
    [
      'are not with RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL',
      { excludeTypes: [EXCLUDE.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL] },
      false,
    ],
    ['are not with RESET_REAPPLY_TYPE_NONE', { reapplyType: REAPPLY.RESET_REAPPLY_TYPE_NONE }, false],
  ];
  test.each(cases)('%s', async (_name, options, reapplied) => {
    await env.withWorker(async () => {
      const h = await start(true, 'reset-signals');
      await settled(h, 2);
      await h.signal(noteSignal, 'late');
      const base = await settled(h, 2, 1);
      const finish = taskThatScheduled(base, 'b');
      const fresh = runOf(h.workflowId, await reset(env, h.workflowId, finish, options));
      const events = (await fresh.fetchHistory()).events!;
      const after = typeNames(events.slice(finish - 1, finish + (reapplied ? 2 : 1)));
      expect(after).toEqual(
        reapplied
          ? ['WORKFLOW_TASK_FAILED', 'WORKFLOW_EXECUTION_SIGNALED', 'WORKFLOW_TASK_SCHEDULED']
          : ['WORKFLOW_TASK_FAILED', 'WORKFLOW_TASK_SCHEDULED'],
      );
      if (reapplied) {
        // A copy of the signal as the base run received it.
        const original = base.find((e) => e.eventType === noteEventType)!.workflowExecutionSignaledEventAttributes!;
        const copy = events[finish].workflowExecutionSignaledEventAttributes!;
        expect([copy.signalName, copy.identity, copy.requestId]).toEqual([
          original.signalName,
          original.identity,
          original.requestId,
        ]);
      }
      await fresh.signal(finishSignal);
      // The workflow hears the signal before the step it had completed by then.
      expect(await fresh.result()).toEqual(
        reapplied ? ['signal:late', 'a', 'b(after signal:late, a)'] : ['a', 'b(after a)'],
      );
      await env.replay(fresh);
    });
  });
});
const noteEventType = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;

describe('an update accepted after the reset point', () => {
  const cases: [string, ResetOptions, boolean][] = [
    ['is admitted again by default, and runs again', {}, true],
    ['is not with RESET_REAPPLY_TYPE_SIGNAL', { reapplyType: REAPPLY.RESET_REAPPLY_TYPE_SIGNAL }, false],
  ];
  test.each(cases)('%s', async (_name, options, reapplied) => {
    await env.withWorker(async () => {
      const h = await start(true, 'reset-update');
      await settled(h, 2);
      expect(await h.executeUpdate(noteUpdate, { args: ['u1'] })).toBe(3);
      const base = (await h.fetchHistory()).events!;
      const finish = taskThatScheduled(base, 'b');
      const fresh = runOf(h.workflowId, await reset(env, h.workflowId, finish, options));
      const events = (await fresh.fetchHistory()).events!;
      expect(typeNames(events.slice(finish - 1, finish + (reapplied ? 2 : 1)))).toEqual(
        reapplied
          ? ['WORKFLOW_TASK_FAILED', 'WORKFLOW_EXECUTION_UPDATE_ADMITTED', 'WORKFLOW_TASK_SCHEDULED']
          : ['WORKFLOW_TASK_FAILED', 'WORKFLOW_TASK_SCHEDULED'],
      );
      if (reapplied) {
        const admitted = events[finish].workflowExecutionUpdateAdmittedEventAttributes!;
        expect(admitted.request?.input?.name).toBe('noteUpdate');
        expect(admitted.origin).toBe(
          temporal.api.enums.v1.UpdateAdmittedEventOrigin.UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY,
        );
      }
      await fresh.signal(finishSignal);
      expect(await fresh.result()).toEqual(
        reapplied ? ['update:u1', 'a', 'b(after update:u1, a)'] : ['a', 'b(after a)'],
      );
      await env.replay(fresh);
    });
  });
});

test('a post-reset signal reaches the workflow before its next decision, after the reapplied ones', async () => {
  await env.withWorker(async () => {
    const h = await start(true, 'reset-post-signal');
    await settled(h, 2);
    await h.signal(noteSignal, 'late');
    const base = await settled(h, 2, 1);
    const finish = taskThatScheduled(base, 'b');
    const operation = { signalWorkflow: { signalName: 'note', input: { payloads: [json('rewound')] } } };
    const options = { postResetOperations: [operation], identity: 'reset-test' };
    if (ON_REAL_SERVER) {
      // Temporal Server 1.32 serves only the UpdateWorkflowOptions operation; SignalWorkflow is
      // pending upstream (temporalio/temporal#11042). The embedded engine applies it as that change
      // does: after the reapplied events, before the new task, with the reset's identity.
      expectStatus(
        await outcome(resetCall(env, h.workflowId, finish, options)),
        S.INVALID_ARGUMENT,
        exactly('unsupported post reset operation: *workflow.PostResetOperation_SignalWorkflow_'),
      );
      expect((await h.describe()).status.name).toBe('RUNNING');
      await h.signal(finishSignal);
      return;
    }
    const fresh = runOf(h.workflowId, await reset(env, h.workflowId, finish, options));
    const events = (await fresh.fetchHistory()).events!;
    expect(typeNames(events.slice(finish - 1, finish + 3))).toEqual([
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_EXECUTION_SIGNALED',
      'WORKFLOW_EXECUTION_SIGNALED',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
    expect(signalsIn(events)).toEqual(['note:late', 'note:rewound']);
    expect(events[finish + 1].workflowExecutionSignaledEventAttributes?.identity).toBe('reset-test');
    await fresh.signal(finishSignal);
    // Step b was scheduled after the workflow had heard both signals.
    expect(await fresh.result()).toEqual([
      'signal:late',
      'signal:rewound',
      'a',
      'b(after signal:late, signal:rewound, a)',
    ]);
    await env.replay(fresh);
  });
});

test('a retried reset (same request id) gets the run the first one made; a new request id resets again', async () => {
  await env.withWorker(async () => {
    const h = await start(true, 'reset-retry');
    const base = await settled(h, 2);
    const finish = taskThatScheduled(base, 'b');
    const requestId = randomUUID();
    const first = await reset(env, h.workflowId, finish, { requestId });
    const again = await reset(env, h.workflowId, finish, { requestId });
    if (ON_REAL_SERVER) {
      // Temporal Server 1.32 compares the request id with the current run's create request id,
      // which a reset run takes from the original start: the retry resets again, terminating the
      // first reset's run (temporalio/temporal#12042, open). The embedded engine de-duplicates.
      expect(again).not.toBe(first);
      expect((await runOf(h.workflowId, first).describe()).status.name).toBe('TERMINATED');
    } else {
      expect(again).toBe(first);
      expect((await runOf(h.workflowId, first).describe()).status.name).toBe('RUNNING');
    }
    const third = await reset(env, h.workflowId, finish, { requestId: randomUUID() });
    expect([first, again]).not.toContain(third);
    expect((await describeRaw(h.workflowId)).workflowExecutionInfo?.execution?.runId).toBe(third);
    expect((await runOf(h.workflowId, again).describe()).status.name).toBe('TERMINATED');
    const fresh = runOf(h.workflowId, third);
    await fresh.signal(finishSignal);
    expect(await fresh.result()).toEqual(['a', 'b(after a)']);
    await env.replay(fresh);
  });
});

test('an activity scheduled before the reset point and unfinished there is pending again and runs again', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('reset-pending');
    const release = holdNextRun(workflowId, 'b');
    const h = await start(true, 'reset-pending', workflowId);
    // While step b runs, a signal's task completes: that is the reset point.
    await waitUntil('step b to run', () => timesRun(workflowId, 'b') === 1);
    await h.signal(noteSignal, 'mid');
    const mid = await waitUntil(
      "the signal's task to complete",
      () => h.fetchHistory(),
      ({ events }) => signalsIn(events!).length === 1 && typeNames(events!).pop() === 'WORKFLOW_TASK_COMPLETED',
    );
    const finish = lastTaskCompleted(mid.events!);
    release();
    await settled(h, 2, 1);
    const fresh = runOf(workflowId, await reset(env, workflowId, finish));
    const events = await settled(fresh, 2, 1);
    expect(typeNames(events.slice(finish - 1, finish + 1))).toEqual([
      'WORKFLOW_TASK_FAILED',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
    // Step b's second run completes the activity scheduled before the reset point.
    const scheduledB = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === '2')!;
    expect(Number(scheduledB.eventId)).toBeLessThan(finish);
    const completedB = events.find((e) => e.eventType === completedType && Number(e.eventId) > finish)!;
    expect(Number(completedB.activityTaskCompletedEventAttributes?.scheduledEventId)).toBe(Number(scheduledB.eventId));
    expect(timesRun(workflowId, 'b')).toBe(2);
    await fresh.signal(finishSignal);
    expect(await fresh.result()).toEqual(['a', 'signal:mid', 'b(after a)']);
    await env.replay(fresh);
  });
});
const completedType = temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED;
