// Update-with-start (ExecuteMultiOperation [start, update]): a new run gets the
// update in its first workflow task; a running run takes it under USE_EXISTING,
// when the start is a retry, or when it already has that update; the response
// says how the start was resolved and where the update got to; and each
// operation's problems are reported in its own status, as the real server does.
import { randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, uid, eventTypes } from './harness';
import { Conflict, Stage, multiOp, operationStatuses, startOp, updateOp, updateValue } from './multi-op-tools';
import { S } from './fuzz-tools';
import { add, addLater, counter, finish, release, total } from './workflows/update-with-start';

const ET = temporal.api.enums.v1.EventType;
const Status = temporal.api.enums.v1.WorkflowExecutionStatus;
const COMPLETED = Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;
const ACCEPTED = Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/update-with-start') });
});
afterAll(async () => {
  await env?.teardown();
});

function withStart(workflowId: string, conflict: 'FAIL' | 'USE_EXISTING' | 'TERMINATE_EXISTING') {
  return new WithStartWorkflowOperation(counter, {
    workflowId,
    taskQueue: env.taskQueue,
    args: [1],
    workflowIdConflictPolicy: conflict,
  });
}

test('a new run gets the update in its first workflow task', async () => {
  await env.withWorker(async () => {
    const op = withStart(uid('uws-new'), 'FAIL');
    expect(await env.client.workflow.executeUpdateWithStart(add, { args: [5], startWorkflowOperation: op })).toBe(6);
    const h = await op.workflowHandle();
    expect(await eventTypes(h)).toEqual([
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
    ]);
    await h.signal(finish);
    expect(await h.result()).toBe(6);
    await env.replay(h);
  });
});

test('USE_EXISTING updates the running run; FAIL is refused as already started; TERMINATE_EXISTING starts over', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('uws-conflict');
    const running = await env.client.workflow.start(counter, { workflowId, taskQueue: env.taskQueue, args: [10] });
    expect(
      await env.client.workflow.executeUpdateWithStart(add, {
        args: [1],
        startWorkflowOperation: withStart(workflowId, 'USE_EXISTING'),
      }),
    ).toBe(11);
    expect(await running.query(total)).toBe(11);

    const refused = withStart(workflowId, 'FAIL');
    const err = await env.client.workflow
      .executeUpdateWithStart(add, { args: [1], startWorkflowOperation: refused })
      .catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
    await expect(refused.workflowHandle()).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);

    const fresh = withStart(workflowId, 'TERMINATE_EXISTING');
    expect(await env.client.workflow.executeUpdateWithStart(add, { args: [2], startWorkflowOperation: fresh })).toBe(3);
    const h = await fresh.workflowHandle();
    const first = env.client.workflow.getHandle(workflowId, running.firstExecutionRunId);
    expect((await first.describe()).status.name).toBe('TERMINATED');
    expect((await h.describe()).runId).not.toBe(running.firstExecutionRunId);
    await h.signal(finish);
    expect(await h.result()).toBe(3);
    await env.replay(first);
    await env.replay(h);
  });
});

test('waiting for ACCEPTED answers before the update completes; its result follows', async () => {
  await env.withWorker(async () => {
    const op = withStart(uid('uws-accepted'), 'FAIL');
    const upd = await env.client.workflow.startUpdateWithStart(addLater, {
      args: [4],
      waitForStage: 'ACCEPTED',
      startWorkflowOperation: op,
    });
    const h = await op.workflowHandle();
    expect(upd.workflowRunId).toBe((await h.describe()).runId);
    const types = await eventTypes(h);
    expect(types).toContain(ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    expect(types).not.toContain(ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    await h.signal(release);
    expect(await upd.result()).toBe(5);
    await h.signal(finish);
    expect(await h.result()).toBe(5);
    await env.replay(h);
  });
});

test('an update the workflow rejects fails; the run it started stays, with no update events', async () => {
  await env.withWorker(async () => {
    const op = withStart(uid('uws-rejected'), 'FAIL');
    const err = await env.client.workflow
      .executeUpdateWithStart(add, { args: [-1], startWorkflowOperation: op })
      .catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(err.cause?.message).toBe('negative');
    const h = await op.workflowHandle();
    expect(await eventTypes(h)).toEqual([
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    ]);
    await h.signal(finish);
    expect(await h.result()).toBe(1);
    await env.replay(h);
  });
});

test('the response: a new run, a retried request, a repeated update id, a closed run', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('uws-raw');
    const start = startOp(env, workflowId, { workflowIdConflictPolicy: Conflict.WORKFLOW_ID_CONFLICT_POLICY_FAIL });
    const first = await multiOp(env, start, updateOp(env, workflowId, 'add', 5, 'u1'));
    const s1 = first.responses![0].startWorkflow!;
    expect(s1.started).toBe(true);
    expect(s1.status).toBe(Status.WORKFLOW_EXECUTION_STATUS_RUNNING);
    expect(s1.firstExecutionRunId).toBe(s1.runId);
    const u1 = first.responses![1].updateWorkflow!;
    expect(u1.stage).toBe(COMPLETED);
    expect(u1.updateRef).toEqual({ workflowExecution: { workflowId, runId: s1.runId }, updateId: 'u1' });
    expect(updateValue(first)).toBe(6);

    // The same request again: the stored outcome, nothing started or run twice.
    const retried = await multiOp(env, start, updateOp(env, workflowId, 'add', 5, 'u1'));
    expect(retried.responses![0].startWorkflow).toMatchObject({ runId: s1.runId, started: false });
    expect(updateValue(retried)).toBe(6);
    // The same start request with a new update: the start is a retry, so the run takes the update.
    expect(updateValue(await multiOp(env, start, updateOp(env, workflowId, 'add', 2, 'u2')))).toBe(8);
    // A completed update id is answered from history, whatever the conflict policy.
    const again = await multiOp(env, startOp(env, workflowId), updateOp(env, workflowId, 'add', 100, 'u2'));
    expect(again.responses![0].startWorkflow).toMatchObject({
      runId: s1.runId,
      started: false,
      status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING,
    });
    expect(updateValue(again)).toBe(8);
    // Waiting for ACCEPTED only: the stage reached, no outcome yet.
    const later = await multiOp(
      env,
      startOp(env, workflowId, { workflowIdConflictPolicy: Conflict.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING }),
      {
        ...updateOp(env, workflowId, 'addLater', 1, 'u3'),
        waitPolicy: { lifecycleStage: ACCEPTED },
      },
    );
    expect(later.responses![1].updateWorkflow!.stage).toBe(ACCEPTED);
    expect(later.responses![1].updateWorkflow!.outcome ?? undefined).toBeUndefined();

    const h = env.client.workflow.getHandle(workflowId);
    await h.signal(release);
    await h.signal(finish);
    expect(await h.result()).toBe(9);
    // After the close the update is still answered from the run's history.
    const closed = await multiOp(env, startOp(env, workflowId), updateOp(env, workflowId, 'add', 100, 'u1'));
    expect(closed.responses![0].startWorkflow).toMatchObject({
      runId: s1.runId,
      started: false,
      status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED,
    });
    expect(updateValue(closed)).toBe(6);
    // A new update id on a closed id starts a new run (reuse policy allows it).
    const next = await multiOp(env, startOp(env, workflowId), updateOp(env, workflowId, 'add', 1, 'u4'));
    expect(next.responses![0].startWorkflow).toMatchObject({ started: true });
    expect(next.responses![0].startWorkflow!.runId).not.toBe(s1.runId);
    expect(updateValue(next)).toBe(2);
    await h.signal(finish);
    await env.replay(env.client.workflow.getHandle(workflowId, s1.runId!));
  });
});

test('an update without an id gets one from the server', async () => {
  await env.withWorker(async () => {
    const workflowId = uid('uws-no-id');
    const res = await multiOp(env, startOp(env, workflowId), updateOp(env, workflowId, 'add', 2, ''));
    expect(res.responses![1].updateWorkflow!.updateRef!.updateId).toMatch(/^[0-9a-f-]{36}$/);
    expect(updateValue(res)).toBe(3);
    await env.client.workflow.getHandle(workflowId).terminate();
  });
});

describe('refused requests: the status of each operation', () => {
  const aborted = { code: S.ABORTED, message: 'Operation was aborted.', details: ['MultiOperationExecutionAborted'] };
  const invalid = (message: string) => ({ code: S.INVALID_ARGUMENT, message, details: [] });

  test('only [start, update] is served', async () => {
    const id = uid('uws-shape');
    const ws = env.connection.workflowService;
    const shapes = [
      [],
      [{ startWorkflow: startOp(env, id) }],
      [{ updateWorkflow: updateOp(env, id, 'add', 1, 'u') }, { startWorkflow: startOp(env, id) }],
    ];
    for (const operations of shapes) {
      const err = await ws.executeMultiOperation({ namespace: env.namespace, operations } as never).catch((e) => e);
      expect([err.code, err.details]).toEqual([S.INVALID_ARGUMENT, 'Operations have to be exactly [Start, Update].']);
      expect(operationStatuses(err)).toBeUndefined();
    }
  });

  const cases: [string, (id: string) => [object, object], number, object[]][] = [
    [
      'different workflow ids',
      (id) => [startOp(env, id), updateOp(env, `${id}-other`, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [aborted, invalid('WorkflowId is not consistent with previous operation(s).')],
    ],
    [
      'a cron schedule',
      (id) => [startOp(env, id, { cronSchedule: '@every 1h' }), updateOp(env, id, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [invalid('CronSchedule is not allowed.'), aborted],
    ],
    [
      'an eager start',
      (id) => [startOp(env, id, { requestEagerExecution: true }), updateOp(env, id, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [invalid('RequestEagerExecution is not supported.'), aborted],
    ],
    [
      'a start delay',
      (id) => [startOp(env, id, { workflowStartDelay: { seconds: 5 } }), updateOp(env, id, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [invalid('WorkflowStartDelay is not supported.'), aborted],
    ],
    [
      'another namespace in the start',
      (id) => [startOp(env, id, { namespace: 'other' }), updateOp(env, id, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [invalid("Operation namespace did not match request's namespace."), aborted],
    ],
    [
      'a start without workflow type',
      (id) => [startOp(env, id, { workflowType: undefined }), updateOp(env, id, 'add', 1, 'u')],
      S.INVALID_ARGUMENT,
      [invalid('WorkflowType is not set on request.'), aborted],
    ],
    [
      'a run id in the update',
      (id) => [
        startOp(env, id),
        updateOp(env, id, 'add', 1, 'u', { workflowExecution: { workflowId: id, runId: randomUUID() } }),
      ],
      S.INVALID_ARGUMENT,
      [aborted, invalid('RunId is not allowed.')],
    ],
    [
      'a first run id in the update',
      (id) => [startOp(env, id), updateOp(env, id, 'add', 1, 'u', { firstExecutionRunId: randomUUID() })],
      S.INVALID_ARGUMENT,
      [aborted, invalid('FirstExecutionRunId is not allowed.')],
    ],
    [
      'an update without name',
      (id) => [startOp(env, id), updateOp(env, id, 'add', 1, 'u', { request: { meta: { updateId: 'u' }, input: {} } })],
      S.INVALID_ARGUMENT,
      [aborted, invalid('Update name is not set on request.')],
    ],
    [
      'both operations wrong',
      (id) => [
        startOp(env, id, { cronSchedule: '@every 1h' }),
        updateOp(env, id, 'add', 1, 'u', { firstExecutionRunId: randomUUID() }),
      ],
      S.INVALID_ARGUMENT,
      [invalid('CronSchedule is not allowed.'), invalid('FirstExecutionRunId is not allowed.')],
    ],
    [
      'waiting for ADMITTED',
      (id) => [
        startOp(env, id),
        updateOp(env, id, 'add', 1, 'u', {
          waitPolicy: { lifecycleStage: Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED },
        }),
      ],
      S.PERMISSION_DENIED,
      [
        aborted,
        {
          code: S.PERMISSION_DENIED,
          message: 'UpdateWorkflowExecution issued asynchronously and waiting on update admitted is not supported.',
          details: ['PermissionDeniedFailure'],
        },
      ],
    ],
    [
      'TERMINATE_IF_RUNNING with a conflict policy',
      (id) => [
        startOp(env, id, {
          workflowIdReusePolicy: 4,
          workflowIdConflictPolicy: Conflict.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
        }),
        updateOp(env, id, 'add', 1, 'u'),
      ],
      S.INVALID_ARGUMENT,
      [
        invalid(
          'Invalid WorkflowIDReusePolicy: WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING cannot be used together with a WorkflowIDConflictPolicy',
        ),
        aborted,
      ],
    ],
  ];
  test.each(cases)('%s', async (_name, build, code, statuses) => {
    const id = uid('uws-bad');
    const err = await multiOp(env, ...build(id)).catch((e) => e);
    expect([err.code, err.details]).toEqual([code, 'Update-with-Start could not be executed.']);
    expect(operationStatuses(err)?.map(({ values: _v, ...s }) => s)).toEqual(statuses);
    // Nothing was started.
    await expect(env.client.workflow.getHandle(id).describe()).rejects.toThrow();
  });

  test('a conflict policy left unset is FAIL: a running id refuses the start, naming its run', async () => {
    const workflowId = uid('uws-unset');
    const running = await env.client.workflow.start(counter, { workflowId, taskQueue: env.taskQueue, args: [0] });
    const err = await multiOp(env, startOp(env, workflowId), updateOp(env, workflowId, 'add', 1, 'u')).catch((e) => e);
    expect([err.code, err.details]).toEqual([S.ALREADY_EXISTS, 'Update-with-Start could not be executed.']);
    const [start, update] = operationStatuses(err)!;
    expect(start).toMatchObject({
      code: S.ALREADY_EXISTS,
      message: `Workflow execution is already running. WorkflowId: ${workflowId}, RunId: ${running.firstExecutionRunId}.`,
    });
    expect(start.values.WorkflowExecutionAlreadyStartedFailure).toMatchObject({
      runId: running.firstExecutionRunId,
      firstExecutionRunId: running.firstExecutionRunId,
    });
    expect(update).toEqual({ ...aborted, values: expect.anything() });
    await running.terminate();
  });
});
