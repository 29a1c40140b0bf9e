// A reset survives kill -9 of the embedded server: its new run, with the reapplied signal and
// update and the post-reset signal, the terminated base run and the link between them, and the
// reset's request id (a retry after the restart gets the same run) are all in the log. After the
// restart a worker takes the new run up where the reset left it: step b runs again, the update
// runs again, and the run completes and replays.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, DefaultLogger, Runtime } from '@temporalio/worker';
import { useKillableServer } from '../server-process';
import type { Env } from '../conformance/harness';
import { finishSignal, noteSignal, noteUpdate, steps } from '../conformance/workflows/reset';
import { step, timesRun } from '../conformance/activities/reset';
import { json, reset, settled, signalsIn, taskThatScheduled, typeNames } from '../conformance/reset-helpers';
import { cachedWorkflowBundle } from '../support/workflow-bundle';

jest.setTimeout(90_000);

const killable = useKillableServer('devserver-reset');
const env = () => ({ connection: killable.connection(), namespace: 'default' }) as Env;
const client = () => new Client({ connection: killable.connection() });

beforeAll(() => Runtime.install({ logger: new DefaultLogger('ERROR') }));

/** Runs `fn` with a worker on `taskQueue` connected to the server as it is now. */
async function withWorker<T>(taskQueue: string, fn: () => Promise<T>): Promise<T> {
  const connection = await NativeConnection.connect({ address: killable.address() });
  try {
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: await cachedWorkflowBundle(require.resolve('../conformance/workflows/reset')),
      activities: { step },
    });
    return await worker.runUntil(fn());
  } finally {
    await connection.close();
  }
}

test('a reset and its new run survive SIGKILL of the server', async () => {
  await killable.start();
  const taskQueue = `reset-durability-${randomUUID()}`;
  const workflowId = `reset-durability-${randomUUID()}`;
  // The base run goes past step b and takes an update and a signal; no worker runs the reset's run before the kill.
  const { base, baseRunId } = await withWorker(taskQueue, async () => {
    const h = await client().workflow.start(steps, { taskQueue, workflowId, args: [true] });
    await settled(h, 2);
    await h.executeUpdate(noteUpdate, { args: ['u1'] });
    await h.signal(noteSignal, 'late');
    return { base: await settled(h, 2, 1), baseRunId: h.firstExecutionRunId };
  });
  const finish = taskThatScheduled(base, 'b');
  const requestId = randomUUID();
  const operation = { signalWorkflow: { signalName: 'note', input: { payloads: [json('rewound')] } } };
  const runId = await reset(env(), workflowId, finish, { requestId, postResetOperations: [operation] });
  const before = (await client().workflow.getHandle(workflowId, runId).fetchHistory()).events!;

  await killable.killAndRestart();

  const fresh = client().workflow.getHandle(workflowId, runId);
  expect((await fresh.fetchHistory()).events).toEqual(before);
  expect(typeNames(before.slice(finish - 1))).toEqual([
    'WORKFLOW_TASK_FAILED',
    'WORKFLOW_EXECUTION_UPDATE_ADMITTED',
    'WORKFLOW_EXECUTION_SIGNALED',
    'WORKFLOW_EXECUTION_SIGNALED',
    'WORKFLOW_TASK_SCHEDULED',
  ]);
  expect((await client().workflow.getHandle(workflowId).describe()).runId).toBe(runId);
  expect((await client().workflow.getHandle(workflowId, baseRunId).describe()).status.name).toBe('TERMINATED');
  // A retry of the reset, after the restart, gets the same run.
  expect(await reset(env(), workflowId, finish, { requestId, postResetOperations: [operation] })).toBe(runId);

  await withWorker(taskQueue, async () => {
    await fresh.signal(finishSignal);
    expect(await fresh.result()).toEqual([
      'update:u1',
      'signal:late',
      'signal:rewound',
      'a',
      'b(after update:u1, signal:late, signal:rewound, a)',
    ]);
  });
  expect(timesRun(workflowId, 'b')).toBe(2);
  const history = await fresh.fetchHistory();
  expect(signalsIn(history.events!)).toEqual(['note:late', 'note:rewound', 'finish:']);
  // The update was taken up from its admitted event, as before the restart: its acceptance names
  // that event and carries no request of its own.
  const admitted = history.events!.find((e) => e.workflowExecutionUpdateAdmittedEventAttributes)!;
  const accepted = history.events!.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)!;
  expect(Number(accepted.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequestSequencingEventId)).toBe(
    Number(admitted.eventId),
  );
  expect(accepted.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest).toBeFalsy();
  await Worker.runReplayHistory(
    { workflowBundle: await cachedWorkflowBundle(require.resolve('../conformance/workflows/reset')) },
    history,
    workflowId,
  );
});
