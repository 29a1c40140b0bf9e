// Workflow tasks at the protocol level: sticky queues and their fallbacks,
// events that arrive while a task runs, UNHANDLED_COMMAND, task failure and
// task timeout with retry, eager activity dispatch. Raw WorkflowService calls play the worker where the
// SDK would hide the behaviour. Transient retries in detail: transient-tasks.engine.test.ts.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import { createEnv, ENGINE, Env, longPoll, uid } from './harness';
import { waitUntil } from '../support/wait-until';
import { CT, ET, rawWorker } from './raw-worker';
import { waitForSignals, go, seen } from './workflows/worker-tasks';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/worker-tasks') });
});
afterAll(async () => {
  await env?.teardown();
});

const ns = () => env.namespace;
const { svc, startRaw, poll, history, types, fail } = rawWorker(() => env);

test('later workflow tasks go to the sticky queue of the worker that ran the first', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(waitForSignals, {
      args: [2],
      taskQueue: env.taskQueue,
      workflowId: uid('sticky'),
    });
    await h.signal(go, 'a');
    // Wait for a task that saw 'a': both signals sent at once may land in the first
    // task on a slow machine (the worker polls late), leaving no later task to be sticky.
    await waitUntil('a task that saw the first signal', async () => (await h.query(seen)).length === 1);
    await h.signal(go, 'b');
    expect(await h.result()).toEqual(['a', 'b']);
    const scheduled = (await h.fetchHistory()).events!.filter(
      (e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    );
    expect(scheduled[0].workflowTaskScheduledEventAttributes!.taskQueue!.kind).toBe(
      temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
    );
    const later = scheduled.slice(1).map((e) => e.workflowTaskScheduledEventAttributes!.taskQueue!.kind);
    expect(later).toContain(temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY);
    await env.replay(h);
  });
});

test('a worker that shuts down hands its sticky workflows back to the normal queue at once', async () => {
  const workflowId = uid('handoff');
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(waitForSignals, { args: [2], taskQueue: env.taskQueue, workflowId });
    await h.signal(go, 'first');
    expect(await h.query(seen)).toEqual(['first']);
  });
  // First worker is gone (ShutdownWorker sent). A new worker must get the next task from the
  // normal queue, not after the task had waited out its 10 s sticky schedule-to-start timeout
  // on the dead worker's queue: that wait would leave a WORKFLOW_TASK_TIMED_OUT in the history.
  const h = env.client.workflow.getHandle(workflowId);
  await h.signal(go, 'second');
  await env.withWorker(async () => {
    expect(await h.result()).toEqual(['first', 'second']);
  });
  expect(await types(workflowId)).not.toContain(ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
  await env.replay(h);
});

test('a sticky task its (live) worker does not pick up falls back to the normal queue after its schedule-to-start timeout', async () => {
  const tq = `raw-${randomUUID()}`;
  const stickyQueue = `${tq}-sticky`;
  const { workflowId } = await startRaw(tq, uid('raw'), 20);
  const t1 = await poll(tq);
  // The sticky worker is alive (it polled moments ago) but will not take the next task.
  await poll(stickyQueue, temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY, 2500).catch(() => undefined);
  await svc().respondWorkflowTaskCompleted({
    taskToken: t1.taskToken,
    identity: 'raw-worker',
    namespace: ns(),
    commands: [],
    stickyAttributes: {
      workerTaskQueue: { name: stickyQueue, kind: 2 },
      scheduleToStartTimeout: { seconds: Long.fromNumber(1) },
    },
  });
  await svc().signalWorkflowExecution({
    namespace: ns(),
    workflowExecution: { workflowId },
    signalName: 's',
    requestId: randomUUID(),
  });
  const t2 = await poll(tq); // arrives after ~1 s on the normal queue
  expect(t2.taskToken?.length).toBeGreaterThan(0);
  const timedOut = (await history(workflowId)).find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)!;
  expect(timedOut.workflowTaskTimedOutEventAttributes!.timeoutType).toBe(
    temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START,
  );
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});

/**
 * A run whose first task was completed asking for a sticky queue that nobody ever polls (its
 * worker is gone). Its sticky schedule-to-start timeout is 10 minutes: a task or query that went
 * to that queue instead of the normal one would come back only then, long after a poll's deadline.
 */
async function stickyToNobody(tq: string) {
  const run = await startRaw(tq);
  const t1 = await poll(tq);
  await svc().respondWorkflowTaskCompleted({
    taskToken: t1.taskToken,
    identity: 'raw-worker',
    namespace: ns(),
    commands: [],
    stickyAttributes: {
      workerTaskQueue: { name: `${tq}-sticky-nobody`, kind: 2 },
      scheduleToStartTimeout: { seconds: Long.fromNumber(600) },
    },
  });
  return run;
}

test('a sticky queue nobody has polled for a while is skipped: the task goes to the normal queue at once', async () => {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await stickyToNobody(tq);
  await svc().signalWorkflowExecution({
    namespace: ns(),
    workflowExecution: { workflowId },
    signalName: 's',
    requestId: randomUUID(),
  });
  // Within one long poll: through the sticky queue it would take the 10-minute timeout.
  const t2 = await poll(tq);
  expect(t2.taskToken?.length).toBeGreaterThan(0);
  expect(await types(workflowId)).not.toContain(ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});

test('events arriving during a running task are buffered after it, and a completion that ignores them is rejected', async () => {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await startRaw(tq);
  const t1 = await poll(tq);
  // A signal lands while the task is running.
  await svc().signalWorkflowExecution({
    namespace: ns(),
    workflowExecution: { workflowId },
    signalName: 'late',
    requestId: randomUUID(),
  });
  let before = (await history(workflowId)).map((e) => e.eventType);
  expect(before[before.length - 1]).toBe(ET.EVENT_TYPE_WORKFLOW_TASK_STARTED); // not written yet
  // Completing the workflow now would lose the signal: the task fails (UNHANDLED_COMMAND), and the
  // worker is told so (SDKs then evict the run: their view of it was incomplete).
  await expect(
    svc().respondWorkflowTaskCompleted({
      taskToken: t1.taskToken,
      identity: 'raw-worker',
      namespace: ns(),
      commands: [
        { commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION, completeWorkflowExecutionCommandAttributes: {} },
      ],
    }),
  ).rejects.toMatchObject({ code: 3 /* INVALID_ARGUMENT */, details: 'UnhandledCommand' });
  before = (await history(workflowId)).map((e) => e.eventType);
  expect(before.slice(3)).toEqual([
    ET.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  ]);
  const failed = (await history(workflowId))[3].workflowTaskFailedEventAttributes!;
  expect(failed.cause).toBe(temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND);
  // The retry carries the signal and may now complete. New events make it a normal task
  // again: attempt 1, its scheduled event written (above).
  const t2 = await poll(tq);
  expect(t2.attempt).toBe(1);
  expect(t2.history!.events!.some((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
  await svc().respondWorkflowTaskCompleted({
    taskToken: t2.taskToken,
    identity: 'raw-worker',
    namespace: ns(),
    commands: [
      { commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION, completeWorkflowExecutionCommandAttributes: {} },
    ],
  });
  const last = (await history(workflowId)).pop()!;
  expect(last.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
});

test('a failed workflow task is retried with a higher attempt, and a timed-out one too', async () => {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await startRaw(tq);
  const t1 = await poll(tq);
  expect(t1.attempt).toBe(1);
  await fail(t1);
  const t2 = await poll(tq);
  expect(t2.attempt).toBe(2);
  // Let the 2 s start-to-close timeout expire.
  const startedAt = Date.now();
  const t3 = await poll(tq);
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1500);
  expect(t3.attempt).toBe(3);
  // The first failure is written; the retries are transient: the timeout of attempt 2 left
  // no trace, and attempt 3's scheduled/started events (ids 5, 6, like attempt 2's) end the
  // history only while it runs.
  expect(await types(workflowId)).toEqual([
    ET.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    ET.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    ET.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    ET.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  ]);
  expect(t3.startedEventId?.toString()).toBe('6');
  // Responding with the stale token of the timed-out attempt is refused.
  await expect(
    svc().respondWorkflowTaskCompleted({
      taskToken: t2.taskToken,
      namespace: ns(),
      identity: 'raw-worker',
      commands: [],
    }),
  ).rejects.toMatchObject({ code: 5 /* NOT_FOUND */ });
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});

function scheduleActivity(activityId: string, taskQueue: string, eager: boolean) {
  return {
    commandType: CT.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
    scheduleActivityTaskCommandAttributes: {
      activityId,
      activityType: { name: 'work' },
      taskQueue: { name: taskQueue },
      input: {
        payloads: [
          { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(activityId)) },
        ],
      },
      startToCloseTimeout: { seconds: Long.fromNumber(30) },
      requestEagerExecution: eager,
    },
  };
}

test('eager activities: handed to the completing worker in the completion, in command order, never to pollers', async () => {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await startRaw(tq);
  const t1 = await poll(tq);
  const res = await svc().respondWorkflowTaskCompleted({
    taskToken: t1.taskToken,
    identity: 'raw-worker',
    namespace: ns(),
    commands: [
      scheduleActivity('first', tq, true),
      scheduleActivity('queued', tq, false),
      scheduleActivity('elsewhere', `${tq}-other`, true), // another queue: the server does not check (SDKs ask only for their own)
      scheduleActivity('second', tq, true),
    ],
  });
  expect(res.activityTasks!.map((t) => t.activityId)).toEqual(['first', 'elsewhere', 'second']);
  const first = res.activityTasks![0];
  expect(first.attempt).toBe(1);
  expect(Buffer.from(first.input!.payloads![0].data!).toString()).toBe('"first"');
  expect(first.workflowExecution!.workflowId).toBe(workflowId);
  // Pollers get the others only.
  const act = (queue: string, timeoutMs?: number) =>
    longPoll(
      env,
      () => svc().pollActivityTaskQueue({ namespace: ns(), taskQueue: { name: queue }, identity: 'raw-worker' }),
      timeoutMs,
    );
  expect((await act(tq)).activityId).toBe('queued');
  expect((await act(`${tq}-other`, 2500)).activityId ?? '').toBe('');
  // A long poll (2 s is the shortest the server takes) that finds nothing: the eager ones are not queued.
  const nothing = await act(tq, 2500);
  expect(nothing.activityId ?? '').toBe('');
  expect(nothing.taskToken?.length ?? 0).toBe(0);
  // An eager task completes like a polled one; its started event names the worker.
  await svc().respondActivityTaskCompleted({
    namespace: ns(),
    taskToken: first.taskToken,
    identity: 'raw-worker',
    result: { payloads: [] },
  });
  const evs = await history(workflowId);
  const started = evs.find((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_STARTED)!;
  expect(started.activityTaskStartedEventAttributes!.identity).toBe('raw-worker');
  expect(evs.some((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).toBe(true);
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});

test('a query to an idle run whose sticky worker is gone goes to the normal queue, with the whole history', async () => {
  const tq = `raw-${randomUUID()}`;
  const { workflowId } = await stickyToNobody(tq);
  const answer = svc().queryWorkflow({ namespace: ns(), execution: { workflowId }, query: { queryType: 'state' } });
  // Within one long poll: through the sticky queue it would take the 10-minute timeout.
  const task = await poll(tq);
  expect(task.query?.queryType).toBe('state');
  expect(task.history?.events?.[0]?.eventId?.toString()).toBe('1');
  const json = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"idle"') };
  await svc().respondQueryTaskCompleted({
    namespace: ns(),
    taskToken: task.taskToken,
    completedType: temporal.api.enums.v1.QueryResultType.QUERY_RESULT_TYPE_ANSWERED,
    queryResult: { payloads: [json] },
  });
  expect(Buffer.from((await answer).queryResult!.payloads![0].data!).toString()).toBe('"idle"');
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});

// The embedded engine only: the real server keeps such a task until its timeout.
const embeddedOnly = ENGINE === 'embedded' && !process.env.TEMPORAL_ADDRESS ? test : test.skip;

embeddedOnly(
  'a workflow task held by a worker that says ShutdownWorker times out after a short grace, not its whole timeout',
  async () => {
    const tq = `raw-${randomUUID()}`;
    const { workflowId } = await startRaw(tq, uid('raw'), 60);
    const identity = `leaving-${randomUUID()}`;
    // Started, then never answered: the SDK drops a task that reaches it while it drains.
    await longPoll(env, () => svc().pollWorkflowTaskQueue({ namespace: ns(), taskQueue: { name: tq }, identity }));
    await svc().shutdownWorker({
      namespace: ns(),
      identity,
      reason: 'graceful shutdown',
      workerInstanceKey: randomUUID(),
    });
    const again = await poll(tq, undefined, 30_000);
    expect(again.taskToken?.length).toBeGreaterThan(0);
    const evs = await history(workflowId);
    const timedOut = evs.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)!;
    expect(timedOut.workflowTaskTimedOutEventAttributes!.timeoutType).toBe(
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE,
    );
    // The server's own times: the task timed out well inside its 60 s (a grace of seconds).
    const startedEvent = evs.find((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_STARTED)!;
    expect(tsToMs(timedOut.eventTime!) - tsToMs(startedEvent.eventTime!)).toBeLessThan(30_000);
    await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
  },
);

test('a query sent to the sticky queue carries no history: new events are for the workflow task that follows', async () => {
  const tq = `raw-${randomUUID()}`;
  const stickyQueue = `${tq}-sticky`;
  const STICKY = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY;
  const { workflowId } = await startRaw(tq, uid('raw'), 20);
  const t1 = await poll(tq);
  // The sticky worker polled moments ago: it is alive, so the query goes to its queue.
  await poll(stickyQueue, STICKY, 2500).catch(() => undefined);
  await svc().respondWorkflowTaskCompleted({
    taskToken: t1.taskToken,
    identity: 'raw-worker',
    namespace: ns(),
    commands: [
      {
        commandType: CT.COMMAND_TYPE_START_TIMER,
        startTimerCommandAttributes: { timerId: 't', startToFireTimeout: { seconds: Long.fromNumber(1) } },
      },
    ],
    stickyAttributes: {
      workerTaskQueue: { name: stickyQueue, kind: STICKY },
      scheduleToStartTimeout: { seconds: Long.fromNumber(10) },
    },
  });
  // No task pending: the query goes out as a query task of its own...
  const answer = svc().queryWorkflow({ namespace: ns(), execution: { workflowId }, query: { queryType: 'state' } });
  // ...and the timer fires before the worker takes it, scheduling a workflow task on the same
  // queue. Had the query task carried those new events, the worker would have applied them to
  // its cached run for the query and then met them again in the workflow task (the SDK left
  // that task unanswered until its timeout: a query and then the run wedged for a minute).
  await waitUntil('the timer to fire', async () => (await types(workflowId)).includes(ET.EVENT_TYPE_TIMER_FIRED));
  let queryTask = await poll(stickyQueue, STICKY);
  if (!queryTask.query) queryTask = await poll(stickyQueue, STICKY);
  expect(queryTask.query?.queryType).toBe('state');
  expect(queryTask.history?.events ?? []).toEqual([]);
  await svc().respondQueryTaskCompleted({
    namespace: ns(),
    taskToken: queryTask.taskToken,
    completedType: temporal.api.enums.v1.QueryResultType.QUERY_RESULT_TYPE_ANSWERED,
    queryResult: { payloads: [] },
  });
  expect((await answer).queryResult).toBeDefined();
  await svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
});
