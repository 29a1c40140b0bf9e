// Eager workflow start: StartWorkflowExecution with requestEagerExecution answers
// with the new run's first workflow task, already started for the caller, when
// the real server would (a run the request created, due at once); the SDK runs
// it on a worker sharing the client's NativeConnection, without a poll.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, uid, eventTypes, workflowBundle } from './harness';
import { greet } from './workflows/update-with-start';

const ET = temporal.api.enums.v1.EventType;
const CT = temporal.api.enums.v1.CommandType;
const Conflict = temporal.api.enums.v1.WorkflowIdConflictPolicy;
const WORKFLOWS = require.resolve('./workflows/update-with-start');

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: WORKFLOWS });
});
afterAll(async () => {
  await env?.teardown();
});

const ws = () => env.connection.workflowService;
const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });

/** A raw eager start of `greet` on a queue nobody polls, so only the caller can run its first task. */
function startRequest(workflowId: string, patch: Record<string, unknown> = {}) {
  return {
    namespace: env.namespace,
    workflowId,
    workflowType: { name: 'greet' },
    taskQueue: { name: `tq-unpolled-${randomUUID()}` },
    input: payloads('raw'),
    requestId: randomUUID(),
    identity: 'eager-starter',
    requestEagerExecution: true,
    ...patch,
  };
}

function completeTask(taskToken: Uint8Array, result: string) {
  return ws().respondWorkflowTaskCompleted({
    namespace: env.namespace,
    taskToken,
    identity: 'eager-starter',
    commands: [
      {
        commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
        completeWorkflowExecutionCommandAttributes: { result: payloads(result) },
      },
    ],
  });
}

test('both the system and the namespace advertise eager workflow start', async () => {
  expect((await ws().getSystemInfo({})).capabilities?.eagerWorkflowStart).toBe(true);
  expect(
    (await ws().describeNamespace({ namespace: env.namespace })).namespaceInfo?.capabilities?.eagerWorkflowStart,
  ).toBe(true);
});

test('the SDK runs the first task on the worker sharing the client connection, without a poll', async () => {
  const connection = await NativeConnection.connect({ address: env.address });
  try {
    const client = new Client({ connection, namespace: env.namespace, identity: 'eager-client' });
    const worker = await Worker.create({
      connection,
      namespace: env.namespace,
      taskQueue: env.taskQueue,
      identity: 'eager-worker',
      workflowBundle: await workflowBundle(WORKFLOWS),
    });
    await worker.runUntil(async () => {
      const h = await client.workflow.start(greet, {
        args: ['eager'],
        taskQueue: env.taskQueue,
        workflowId: uid('eager-sdk'),
        requestEagerStart: true,
      });
      expect(h.eagerlyStarted).toBe(true);
      expect(await h.result()).toBe('hello eager');
      const events = (await h.fetchHistory()).events!;
      expect(events.map((e) => e.eventType)).toEqual([
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
        ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
        ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
      ]);
      expect(events[0].workflowExecutionStartedEventAttributes?.eagerExecutionAccepted).toBe(true);
      // The task was started for the starting client, and completed by the worker.
      expect(events[2].workflowTaskStartedEventAttributes?.identity).toBe('eager-client');
      expect(events[3].workflowTaskCompletedEventAttributes?.identity).toBe('eager-worker');
      await env.replay(h);
    });
  } finally {
    await connection.close();
  }
});

test('the response carries the started first task; a retried request gets it again while it is out', async () => {
  const req = startRequest(uid('eager-raw'));
  const res = await ws().startWorkflowExecution(req);
  expect(res.started).toBe(true);
  const task = res.eagerWorkflowTask!;
  expect(task.workflowExecution).toEqual({ workflowId: req.workflowId, runId: res.runId });
  expect(task.workflowType?.name).toBe('greet');
  expect([task.startedEventId?.toString(), task.attempt, task.previousStartedEventId?.toString()]).toEqual([
    '3',
    1,
    '0',
  ]);
  expect(task.workflowExecutionTaskQueue?.name).toBe(req.taskQueue.name);
  const events = task.history!.events!;
  expect(events.map((e) => e.eventType)).toEqual([
    ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  ]);
  expect(events[0].workflowExecutionStartedEventAttributes?.eagerExecutionAccepted).toBe(true);
  expect(events[2].workflowTaskStartedEventAttributes).toMatchObject({
    identity: 'eager-starter',
    requestId: req.requestId,
  });

  const retried = await ws().startWorkflowExecution(req);
  expect([retried.runId, retried.eagerWorkflowTask?.startedEventId?.toString()]).toEqual([res.runId, '3']);
  const pending = (
    await ws().describeWorkflowExecution({ namespace: env.namespace, execution: { workflowId: req.workflowId } })
  ).pendingWorkflowTask;
  expect(pending?.state).toBe(temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED);

  await completeTask(task.taskToken!, 'by hand');
  const h = env.client.workflow.getHandle(req.workflowId);
  expect(await h.result()).toBe('by hand');
  // Once its first task is done, a retry gets the run only.
  const late = await ws().startWorkflowExecution(req);
  expect([late.runId, late.started, late.eagerWorkflowTask ?? undefined]).toEqual([res.runId, true, undefined]);
});

test('no eager task when the first task must wait or the run is not new', async () => {
  const waiting = [
    startRequest(uid('eager-delay'), { workflowStartDelay: { seconds: 60 } }),
    startRequest(uid('eager-cron'), { cronSchedule: '@every 1h' }),
  ];
  for (const req of waiting) {
    const res = await ws().startWorkflowExecution(req);
    expect([res.started, res.eagerWorkflowTask ?? undefined]).toEqual([true, undefined]);
    await env.client.workflow.getHandle(req.workflowId).terminate();
  }

  const first = startRequest(uid('eager-conflict'));
  const running = await ws().startWorkflowExecution(first);
  const reused = await ws().startWorkflowExecution({
    ...first,
    requestId: randomUUID(),
    workflowIdConflictPolicy: Conflict.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
  });
  expect([reused.runId, reused.started, reused.eagerWorkflowTask ?? undefined]).toEqual([
    running.runId,
    false,
    undefined,
  ]);
  // TERMINATE_EXISTING creates a run: that one's first task is the caller's.
  const replaced = await ws().startWorkflowExecution({
    ...first,
    requestId: randomUUID(),
    workflowIdConflictPolicy: Conflict.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
  });
  expect(replaced.runId).not.toBe(running.runId);
  expect(replaced.eagerWorkflowTask?.workflowExecution?.runId).toBe(replaced.runId);
  await completeTask(replaced.eagerWorkflowTask!.taskToken!, 'replaced');
  expect(await env.client.workflow.getHandle(first.workflowId, replaced.runId).result()).toBe('replaced');
});

test('an eager task its caller never completes times out and goes to a poller', async () => {
  const workflowId = uid('eager-lost');
  const req = startRequest(workflowId, { taskQueue: { name: env.taskQueue }, workflowTaskTimeout: { seconds: 1 } });
  const res = await ws().startWorkflowExecution(req);
  expect(res.eagerWorkflowTask?.startedEventId?.toString()).toBe('3');
  await env.withWorker(async () => {
    const h = env.client.workflow.getHandle(workflowId);
    expect(await h.result()).toBe('hello raw');
    expect((await eventTypes(h)).slice(0, 5)).toEqual([
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ]);
    await env.replay(h);
  });
});
