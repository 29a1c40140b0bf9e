// A transient workflow task (a retry of a failed one, whose events are not
// written) survives kill -9 of the embedded server like any other state: after
// the restart it is still pending or running, with the same made-up events,
// and completes or times out as it would have.
import { randomUUID } from 'node:crypto';
import { useKillableServer } from '../server-process';
import type { Env } from '../conformance/harness';
import { COMPLETE, IDENTITY, brief, rawWorker } from '../conformance/raw-worker';

jest.setTimeout(60_000);

const killable = useKillableServer('devserver-transient');
const connection = () => killable.connection();

const raw = rawWorker(() => ({ connection: connection(), namespace: 'default' }) as Env);
const FIRST_FAILURE = [
  '1 WORKFLOW_EXECUTION_STARTED',
  '2 WORKFLOW_TASK_SCHEDULED attempt=1',
  '3 WORKFLOW_TASK_STARTED scheduled=2',
  '4 WORKFLOW_TASK_FAILED scheduled=2 started=3',
];
const SCHEDULED = '5 WORKFLOW_TASK_SCHEDULED attempt=2';
const STARTED = '6 WORKFLOW_TASK_STARTED scheduled=5';
const TIMING_OUT_S = 10;

async function failedOnce(taskTimeoutSeconds: number) {
  const tq = `transient-${randomUUID()}`;
  const { workflowId } = await raw.startRaw(tq, `transient-${randomUUID()}`, taskTimeoutSeconds);
  await raw.fail(await raw.poll(tq));
  return { tq, workflowId };
}

const briefs = async (workflowId: string) => (await raw.history(workflowId)).map(brief);

test('transient workflow tasks, scheduled or running, survive SIGKILL of the server', async () => {
  await killable.start();

  const scheduled = await failedOnce(10);
  const running = await failedOnce(30);
  const runningTask = await raw.poll(running.tq);
  await raw.signal(running.workflowId); // waits for the running task: buffered
  // Its timeout must outlast the restart on a loaded machine (a 3 s one did not once), yet end in the test.
  const timingOut = await failedOnce(TIMING_OUT_S);
  const timingOutTask = await raw.poll(timingOut.tq);
  const timingOutStarted = Date.now();
  expect(await briefs(running.workflowId)).toEqual([...FIRST_FAILURE, SCHEDULED, STARTED]);

  await killable.killAndRestart();

  // Still transient: nothing written, the made-up events shown as before.
  expect(await briefs(scheduled.workflowId)).toEqual([...FIRST_FAILURE, SCHEDULED]);
  expect(await briefs(running.workflowId)).toEqual([...FIRST_FAILURE, SCHEDULED, STARTED]);
  expect(await briefs(timingOut.workflowId)).toEqual([...FIRST_FAILURE, SCHEDULED, STARTED]);

  // The scheduled one is dispatched with its events.
  const t2 = await raw.poll(scheduled.tq);
  expect(t2.attempt).toBe(2);
  expect(t2.history!.events!.map(brief)).toEqual([...FIRST_FAILURE, SCHEDULED, STARTED]);
  await raw.complete(t2, [COMPLETE]);
  expect((await briefs(scheduled.workflowId)).slice(4)).toEqual([
    SCHEDULED,
    STARTED,
    '7 WORKFLOW_TASK_COMPLETED scheduled=5 started=6',
    '8 WORKFLOW_EXECUTION_COMPLETED',
  ]);

  // The running one takes its worker's completion; the signal follows it, in a normal task.
  await raw.complete(runningTask);
  const written = await raw.history(running.workflowId);
  expect(written.slice(4).map(brief)).toEqual([
    SCHEDULED,
    STARTED,
    '7 WORKFLOW_TASK_COMPLETED scheduled=5 started=6',
    '8 WORKFLOW_EXECUTION_SIGNALED',
    '9 WORKFLOW_TASK_SCHEDULED attempt=1',
  ]);
  expect(written[5].workflowTaskStartedEventAttributes!.identity).toBe(IDENTITY);
  expect((await raw.poll(running.tq)).attempt).toBe(1);

  // The other times out when it would have (TIMING_OUT_S after it started), leaving no trace.
  const t3 = await raw.poll(timingOut.tq);
  expect(t3.attempt).toBe(3);
  expect(Date.now() - timingOutStarted).toBeGreaterThanOrEqual(TIMING_OUT_S * 1000 - 500);
  await expect(raw.complete(timingOutTask)).rejects.toMatchObject({ code: 5 /* NOT_FOUND */ });
  expect(await briefs(timingOut.workflowId)).toEqual([
    ...FIRST_FAILURE,
    '5 WORKFLOW_TASK_SCHEDULED attempt=3',
    STARTED,
  ]);

  const ids = (await raw.history(running.workflowId)).map((e) => Number(e.eventId));
  expect(ids).toEqual(ids.map((_, i) => i + 1));
  for (const r of [running, timingOut]) await raw.terminate(r.workflowId);
});
