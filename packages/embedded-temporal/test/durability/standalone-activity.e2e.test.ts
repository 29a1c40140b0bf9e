// Standalone activities survive kill -9 of the embedded server like workflow
// runs: after the restart a queued attempt is still queued, a running one still
// takes its worker's answer, a delayed one starts when it was due, and a closed
// one keeps its outcome.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { defaultPayloadConverter } from '@temporalio/common';
import { useKillableServer } from '../server-process';

jest.setTimeout(60_000);

const killable = useKillableServer('devserver-standalone');
const connection = () => killable.connection();

const ws = () => connection().workflowService;
const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });
const value = (p: { payloads?: unknown[] | null } | null | undefined) =>
  defaultPayloadConverter.fromPayload(p!.payloads![0] as never);

async function start(patch: Record<string, unknown> = {}) {
  const req = {
    namespace: 'default',
    activityId: `durable-${randomUUID()}`,
    activityType: { name: 'echo' },
    taskQueue: { name: `durable-${randomUUID()}` },
    startToCloseTimeout: { seconds: Long.fromNumber(30) },
    requestId: randomUUID(),
    ...patch,
  };
  await ws().startActivityExecution(req);
  return req;
}

const poll = (taskQueue: { name: string }) =>
  connection().withDeadline(Date.now() + 10_000, () =>
    ws().pollActivityTaskQueue({ namespace: 'default', taskQueue, identity: 'durable-worker' }),
  );
const complete = (taskToken: Uint8Array, result: string) =>
  ws().respondActivityTaskCompleted({ namespace: 'default', taskToken, result: payloads(result) });
const outcomeOf = async (activityId: string) =>
  (
    await connection().withDeadline(Date.now() + 10_000, () =>
      ws().pollActivityExecution({ namespace: 'default', activityId }),
    )
  ).outcome;

test('queued, running, delayed and closed standalone activities survive SIGKILL of the server', async () => {
  await killable.start();

  const queued = await start();
  const running = await start();
  const runningTask = await poll(running.taskQueue);
  const delayed = await start({ startDelay: { seconds: Long.fromNumber(2) } });
  const closed = await start();
  await complete((await poll(closed.taskQueue)).taskToken!, 'before');

  await killable.killAndRestart();

  expect(value((await outcomeOf(closed.activityId))?.result)).toBe('before');
  await complete(runningTask.taskToken!, 'across');
  expect(value((await outcomeOf(running.activityId))?.result)).toBe('across');
  const queuedTask = await poll(queued.taskQueue);
  expect([queuedTask.activityId, queuedTask.attempt]).toEqual([queued.activityId, 1]);
  await complete(queuedTask.taskToken!, 'after');
  expect(value((await outcomeOf(queued.activityId))?.result)).toBe('after');
  const delayedTask = await poll(delayed.taskQueue);
  expect(delayedTask.activityId).toBe(delayed.activityId);
  const d = await ws().describeActivityExecution({ namespace: 'default', activityId: delayed.activityId });
  expect(d.info?.runState).toBe(2); // STARTED
});
