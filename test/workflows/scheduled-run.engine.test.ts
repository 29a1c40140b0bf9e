// A schedule's run in the workflows, on the engine (fake model): it starts its
// task as a child that joins the request's session by itself, lasts as long
// as the task, and reports how the task ended; a run request's task announces
// its schedules right after agent_started. Histories are saved
// (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, replayingWorker, saveHistories as save, worker } from './env';
import { fakeActivities, recorder, taskInput } from './fake-activities';
import type { ScheduledRunInput } from '../../workflows/scheduled-run';
import type { PreparedTask } from '../../activities/schedules';
import { SEARCH_ATTRIBUTES, sessionWorkflowId } from '../../workflows/types';
import { scheduledTaskId } from '../../src/common/schedules/schedule-ids';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(60_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-scheduled-${randomUUID()}`;
const rec = recorder();
const prepared: string[] = [];
const preparedRuns: { workflowId: string; firstRunId?: string }[] = [];

/** The task a schedule's run starts (its id as the real activity makes it): the request's message in its session, joining it by itself. */
async function prepareScheduledTask(
  run: ScheduledRunInput & { runWorkflowId: string; runFirstRunId?: string },
): Promise<PreparedTask> {
  prepared.push(run.runWorkflowId);
  preparedRuns.push({ workflowId: run.runWorkflowId, firstRunId: run.runFirstRunId });
  const input = taskInput(run.request.message, {
    taskId: scheduledTaskId(run.runWorkflowId, run.runFirstRunId),
    account: run.account,
    session: run.session,
    background: true,
    joinsSession: true,
    joinGraceMs: 60_000,
  });
  return {
    input,
    memo: { account: run.account, session: run.session, schedule: run.scheduleId },
    searchAttributes: {
      [SEARCH_ATTRIBUTES.status]: ['queued'],
      [SEARCH_ATTRIBUTES.account]: [run.account],
      [SEARCH_ATTRIBUTES.session]: [run.session],
      [SEARCH_ATTRIBUTES.schedule]: [run.scheduleId],
    },
  };
}

const activities = () => ({ ...fakeActivities(() => env, taskQueue, rec), prepareScheduledTask });

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

function runInput(message: string): ScheduledRunInput {
  return {
    scheduleId: `sched_${randomUUID().replace(/-/g, '')}`,
    account: 'acct',
    session: `sess_${randomUUID().replace(/-/g, '')}`,
    request: { message, mode: 'base', background: true, multitask: 'queue', metadata: {} } as never,
  };
}

test('the run starts its task as a child that joins the session itself, and ends with it', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const input = runInput('tools:1');
    const h = await env.client.workflow.start('scheduledRun', {
      taskQueue,
      workflowId: `${input.scheduleId}-2026-11-26T09:00:00Z`,
      args: [input],
    });
    const result = (await h.result()) as { task_id: string; status: string };
    expect(result.status).toBe('completed');
    expect(prepared).toContain(h.workflowId);
    const task = env.client.workflow.getHandle(result.task_id);
    const d = await task.describe();
    expect(d.status.name).toBe('COMPLETED');
    expect(d.parentExecution?.workflowId).toBe(h.workflowId);
    expect(d.searchAttributes[SEARCH_ATTRIBUTES.schedule]).toEqual([input.scheduleId]);
    // No gateway enqueued it: it joined the session without waiting out the grace period (60 s here).
    expect(rec.calls[result.task_id]).toContain('joinSession');
    const session = await env.client.workflow.getHandle(sessionWorkflowId('acct', input.session)).describe();
    expect(session.status.name).toBe('RUNNING');
    await save('scheduled-run', h, task);
  });
});

test('two runs of one schedule time are two tasks; runs in parallel replay on a worker that caches none', async () => {
  // Every workflow task replays the history so far (no cache): the shape must replay mid-run, with
  // two schedules' runs and their tasks completing at once.
  const w = await replayingWorker(env, taskQueue, activities(), 0);
  await w.runUntil(async () => {
    const [a, b] = [runInput('tools:1'), runInput('tools:1')];
    const start = (input: ScheduledRunInput, workflowId: string) =>
      env.client.workflow.start('scheduledRun', { taskQueue, workflowId, args: [input] });
    const idA = `${a.scheduleId}-2026-11-26T11:00:00Z`;
    const [h1, h2] = await Promise.all([start(a, idA), start(b, `${b.scheduleId}-2026-11-26T11:00:00Z`)]);
    const [r1, r2] = (await Promise.all([h1.result(), h2.result()])) as { task_id: string; status: string }[];
    // The same schedule time again once its run has closed (a second trigger within that second).
    const h3 = await start(a, idA);
    const r3 = (await h3.result()) as { task_id: string; status: string };
    expect([r1.status, r2.status, r3.status]).toEqual(['completed', 'completed', 'completed']);
    expect(new Set([r1.task_id, r2.task_id, r3.task_id]).size).toBe(3);
    expect(preparedRuns).toContainEqual({ workflowId: idA, firstRunId: h1.firstExecutionRunId });
    expect(preparedRuns).toContainEqual({ workflowId: idA, firstRunId: h3.firstExecutionRunId });
    await save('scheduled-run-same-second', h1, h2, h3);
  });
});

test('a cancelled task ends its run as cancelled; the run does not fail', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const input = runInput('wait:30:1');
    const h = await env.client.workflow.start('scheduledRun', {
      taskQueue,
      workflowId: `${input.scheduleId}-2026-11-26T10:00:00Z`,
      args: [input],
    });
    const taskId = await waitUntil(
      'the run to start its task',
      async () =>
        ((await h.fetchHistory()).events ?? []).find((e) => e.childWorkflowExecutionStartedEventAttributes)
          ?.childWorkflowExecutionStartedEventAttributes!.workflowExecution!.workflowId,
    );
    // The task is in its 30 s wait (the tool's timer is started) when it is cancelled.
    const task = env.client.workflow.getHandle(taskId);
    await waitUntil('the task in its 30 s wait', async () =>
      ((await task.fetchHistory()).events ?? []).some(
        (e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds) === 30,
      ),
    );
    await task.cancel();
    expect(await h.result()).toEqual({ task_id: taskId, status: 'cancelled' });
  });
});

test("a run request's task announces its schedules right after agent_started", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const schedules = [{ schedule_id: 'sched_0123', next_run_at: '2026-11-27T09:00:00.000Z' }];
    const i = taskInput('hello', { ownsTurn: true, schedules });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const result = (await h.result()) as { events: { type: string; schedules?: unknown }[] };
    expect(result.events.slice(0, 2)).toEqual([{ type: 'agent_started' }, { type: 'agent_scheduled', schedules }]);
    expect(rec.published[i.taskId].map((e) => e.type).slice(0, 2)).toEqual(['agent_started', 'agent_scheduled']);
    await save('scheduled-announce', h);
  });
});
