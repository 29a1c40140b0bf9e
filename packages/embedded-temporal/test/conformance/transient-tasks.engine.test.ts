// Transient workflow tasks: once a workflow task has failed (or timed out) on
// the normal queue, its retries write nothing to history until one completes.
// Their scheduled/started events are made up for the worker's poll and for the
// history's last page; they are written when the attempt completes; a new event
// turns the retry back into a normal task of attempt 1.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import { COMPLETE, CT, ET, IDENTITY, STICKY, brief, rawWorker } from './raw-worker';
import { failsUntilFixed, fix } from './workflows/worker-tasks';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/worker-tasks') });
});
afterAll(async () => {
  await env?.teardown();
});

const { svc, startRaw, poll, history, types, signal, fail, complete, terminate } = rawWorker(() => env);
const ns = () => env.namespace;
const describeRun = (workflowId: string) =>
  svc().describeWorkflowExecution({ namespace: ns(), execution: { workflowId } });
const briefs = async (workflowId: string) => (await history(workflowId)).map(brief);
const ms = (t: { seconds?: Long | number | null; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

const FIRST_FAILURE = [
  '1 WORKFLOW_EXECUTION_STARTED',
  '2 WORKFLOW_TASK_SCHEDULED attempt=1',
  '3 WORKFLOW_TASK_STARTED scheduled=2',
  '4 WORKFLOW_TASK_FAILED scheduled=2 started=3',
];

/** A raw run whose first workflow task failed: its retry (attempt 2) is transient. */
async function failedOnce(taskTimeoutSeconds = 2) {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await startRaw(tq, uid('transient'), taskTimeoutSeconds);
  await fail(await poll(tq));
  return { tq, workflowId };
}

test('a transient attempt: its events are made up for the poll and the last history page, and written when it completes', async () => {
  const { tq, workflowId } = await failedOnce();
  // Scheduled: only its scheduled event follows the written history.
  expect(await briefs(workflowId)).toEqual([...FIRST_FAILURE, '5 WORKFLOW_TASK_SCHEDULED attempt=2']);
  let d = await describeRun(workflowId);
  expect(d.pendingWorkflowTask).toMatchObject({
    attempt: 2,
    state: temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED,
  });
  expect(d.workflowExecutionInfo!.historyLength!.toString()).toBe('4');

  const t2 = await poll(tq);
  expect(t2.attempt).toBe(2);
  expect(t2.startedEventId!.toString()).toBe('6');
  const polled = t2.history!.events!;
  expect(polled.map(brief)).toEqual([
    ...FIRST_FAILURE,
    '5 WORKFLOW_TASK_SCHEDULED attempt=2',
    '6 WORKFLOW_TASK_STARTED scheduled=5',
  ]);
  expect(polled[5].workflowTaskStartedEventAttributes!.identity).toBe(IDENTITY);
  expect(polled[4].workflowTaskScheduledEventAttributes!.taskQueue!.name).toBe(tq);

  // Started: both made-up events end the history (the started one names no worker there).
  const shown = await history(workflowId);
  expect(shown.map(brief)).toEqual(polled.map(brief));
  expect(shown[5].workflowTaskStartedEventAttributes!.identity ?? '').toBe('');
  const reverse = await svc().getWorkflowExecutionHistoryReverse({ namespace: ns(), execution: { workflowId } });
  expect(reverse.history!.events!.map((e) => Number(e.eventId))).toEqual([4, 3, 2, 1]);
  // The CLI (and UI) get the written history only.
  const asCli = await env.connection.withMetadata({ 'client-name': 'temporal-cli' }, () =>
    svc().getWorkflowExecutionHistory({ namespace: ns(), execution: { workflowId } }),
  );
  expect(asCli.history!.events!.map(brief)).toEqual(FIRST_FAILURE);

  // Completed: the events are written, with the times they happened, then the completion.
  await complete(t2);
  const written = await history(workflowId);
  expect(written.map(brief)).toEqual([
    ...FIRST_FAILURE,
    '5 WORKFLOW_TASK_SCHEDULED attempt=2',
    '6 WORKFLOW_TASK_STARTED scheduled=5',
    '7 WORKFLOW_TASK_COMPLETED scheduled=5 started=6',
  ]);
  expect(ms(written[4].eventTime)).toBe(ms(t2.scheduledTime));
  expect(ms(written[5].eventTime)).toBe(ms(t2.startedTime));
  expect(written[5].workflowTaskStartedEventAttributes!.identity).toBe(IDENTITY);
  expect(written[5].workflowTaskStartedEventAttributes!.requestId).toBe(
    polled[5].workflowTaskStartedEventAttributes!.requestId,
  );
  d = await describeRun(workflowId);
  expect(d.pendingWorkflowTask ?? undefined).toBeUndefined();
  expect(d.workflowExecutionInfo!.historyLength!.toString()).toBe('7');
  await terminate(workflowId);
});

test('a transient attempt that fails, is refused or times out writes nothing; the next attempt comes at once with a longer timeout', async () => {
  const { tq, workflowId } = await failedOnce();
  const t2 = await poll(tq);
  // A poll already waits when attempt 2 fails: attempt 3 is scheduled there and then (no
  // backoff timer stands before it) and handed straight to that poll.
  const next = poll(tq);
  await fail(t2);
  expect((await describeRun(workflowId)).pendingWorkflowTask?.attempt).toBe(3);
  const t3 = await next;
  expect(t3.attempt).toBe(3);
  // The server's own times for it: scheduled, then started by the waiting poll, with no
  // backoff (of a second or more) between them.
  expect(ms(t3.startedTime) - ms(t3.scheduledTime)).toBeLessThan(1000);
  // A retry that fails again is not recorded as failed: the completion is refused and the
  // task left running, to time out.
  const badTimer = { commandType: CT.COMMAND_TYPE_START_TIMER };
  await expect(complete(t3, [badTimer])).rejects.toMatchObject({ code: 3 /* INVALID_ARGUMENT */ });
  const d = await describeRun(workflowId);
  expect(d.pendingWorkflowTask).toMatchObject({
    attempt: 3,
    state: temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED,
  });
  // From attempt 3 on, queries fail fast.
  await expect(
    svc().queryWorkflow({ namespace: ns(), execution: { workflowId }, query: { queryType: 'q' } }),
  ).rejects.toMatchObject({
    code: 9 /* FAILED_PRECONDITION */,
    details: expect.stringMatching(/failed state/),
  });
  const t4 = await poll(tq); // after attempt 3's 2 s timeout
  expect(t4.attempt).toBe(4);
  // Attempt 4 on: the run's 2 s task timeout plus a jittered backoff of 4-5 s.
  const timeout = ms(t4.history!.events![4].workflowTaskScheduledEventAttributes!.startToCloseTimeout);
  expect(timeout).toBeGreaterThanOrEqual(6000);
  expect(timeout).toBeLessThanOrEqual(7000);
  expect((await briefs(workflowId)).slice(0, 4)).toEqual(FIRST_FAILURE);
  expect((await types(workflowId)).slice(4)).toEqual([
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  ]);
  // A forced close does not record the running transient task as failed either.
  await terminate(workflowId);
  expect(await types(workflowId)).toEqual([
    ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    ET.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  ]);
});

test('a signal while a transient attempt is scheduled takes its event ids: the attempt starts as a normal task of attempt 1', async () => {
  const { tq, workflowId } = await failedOnce();
  await signal(workflowId);
  expect(await briefs(workflowId)).toEqual([...FIRST_FAILURE, '5 WORKFLOW_EXECUTION_SIGNALED']);
  expect((await describeRun(workflowId)).pendingWorkflowTask?.attempt).toBe(2);
  const t2 = await poll(tq);
  expect(t2.attempt).toBe(1);
  expect(t2.startedEventId!.toString()).toBe('7');
  const expected = [
    ...FIRST_FAILURE,
    '5 WORKFLOW_EXECUTION_SIGNALED',
    '6 WORKFLOW_TASK_SCHEDULED attempt=1',
    '7 WORKFLOW_TASK_STARTED scheduled=6',
  ];
  expect(t2.history!.events!.map(brief)).toEqual(expected);
  expect(await briefs(workflowId)).toEqual(expected);
  await complete(t2, [COMPLETE]);
  expect((await briefs(workflowId)).slice(7)).toEqual([
    '8 WORKFLOW_TASK_COMPLETED scheduled=6 started=7',
    '9 WORKFLOW_EXECUTION_COMPLETED',
  ]);
});

test.each([
  [
    'completes',
    [
      '5 WORKFLOW_TASK_SCHEDULED attempt=2',
      '6 WORKFLOW_TASK_STARTED scheduled=5',
      '7 WORKFLOW_TASK_COMPLETED scheduled=5 started=6',
      '8 WORKFLOW_EXECUTION_SIGNALED',
      '9 WORKFLOW_TASK_SCHEDULED attempt=1',
    ],
  ],
  ['fails', ['5 WORKFLOW_EXECUTION_SIGNALED', '6 WORKFLOW_TASK_SCHEDULED attempt=1']],
])(
  'a signal while a transient attempt runs waits for it; when it %s, the next task is a normal one',
  async (outcome, after) => {
    const { tq, workflowId } = await failedOnce();
    const t2 = await poll(tq);
    await signal(workflowId);
    expect(await briefs(workflowId)).toEqual([
      ...FIRST_FAILURE,
      '5 WORKFLOW_TASK_SCHEDULED attempt=2',
      '6 WORKFLOW_TASK_STARTED scheduled=5',
    ]);
    if (outcome === 'completes') await complete(t2);
    else await fail(t2);
    expect(await briefs(workflowId)).toEqual([...FIRST_FAILURE, ...after]);
    const t3 = await poll(tq);
    expect(t3.attempt).toBe(1);
    expect(t3.history!.events!.some((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
    await terminate(workflowId);
  },
);

test('a task that fails on the sticky queue is retried as attempt 1 on the normal queue, and only its failure there makes retries transient', async () => {
  const tq = `raw-${randomUUID()}`;
  const stickyQueue = `${tq}-sticky`;
  const { workflowId } = await startRaw(tq, uid('sticky-fail'), 20);
  const t1 = await poll(tq);
  // The sticky worker has polled lately, so the next task goes to its queue.
  await poll(stickyQueue, STICKY, 2500).catch(() => undefined);
  await complete(t1, [], {
    stickyAttributes: {
      workerTaskQueue: { name: stickyQueue, kind: STICKY },
      scheduleToStartTimeout: { seconds: Long.fromNumber(5) },
    },
  });
  await signal(workflowId);
  const t2 = await poll(stickyQueue, STICKY);
  expect(t2.attempt).toBe(1);
  await fail(t2);
  const events = await history(workflowId);
  expect(events.slice(4).map(brief)).toEqual([
    '5 WORKFLOW_EXECUTION_SIGNALED',
    '6 WORKFLOW_TASK_SCHEDULED attempt=1',
    '7 WORKFLOW_TASK_STARTED scheduled=6',
    '8 WORKFLOW_TASK_FAILED scheduled=6 started=7',
    '9 WORKFLOW_TASK_SCHEDULED attempt=1',
  ]);
  expect(events[5].workflowTaskScheduledEventAttributes!.taskQueue!.kind).toBe(STICKY);
  expect(events[8].workflowTaskScheduledEventAttributes!.taskQueue!.kind).toBe(
    temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
  );
  const t3 = await poll(tq);
  expect(t3.attempt).toBe(1);
  await fail(t3);
  expect((await briefs(workflowId)).slice(9)).toEqual([
    '10 WORKFLOW_TASK_STARTED scheduled=9',
    '11 WORKFLOW_TASK_FAILED scheduled=9 started=10',
    '12 WORKFLOW_TASK_SCHEDULED attempt=2',
  ]);
  expect((await poll(tq)).attempt).toBe(2);
  await terminate(workflowId);
});

test('an SDK worker whose task keeps failing: one failure is written, the retries time out without a trace until a signal fixes it', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(failsUntilFixed, {
      taskQueue: env.taskQueue,
      workflowId: uid('fails'),
      workflowTaskTimeout: '1s',
    });
    // The SDK reports the first failure only; later attempts are left to time out.
    await waitUntil(
      'the workflow task to reach attempt 3',
      async () => (await h.describe()).raw.pendingWorkflowTask?.attempt ?? 0,
      (attempt) => attempt >= 3,
    );
    const failing = (await h.fetchHistory()).events!.map((e) => e.eventType);
    expect(failing.filter((t) => t === ET.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toHaveLength(1);
    expect(failing).not.toContain(ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
    await h.signal(fix);
    expect(await h.result()).toBe('fixed');
    expect(await types(h.workflowId)).toEqual([
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_FAILED,
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
      ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    ]);
    await env.replay(h);
  });
});
