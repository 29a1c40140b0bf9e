// max_duration in the workflow, on the engine (fake model): a durable timer
// that, when it fires, cancels whatever is in flight (a `wait` timer, a model
// turn) and ends the run failed with max_duration, with a cap's closing
// events; a run that answers in time is untouched, and a cancel from outside
// is still a cancel. Histories are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createEnv, saveHistories as save, worker } from './env';
import { type InputFields, fakeActivities, recorder, taskInput } from './fake-activities';
import type { PartialResult } from '../../workflows/types';
import { waitUntil } from '../support/wait-until';
import { statusQuery } from '../../workflows/definitions';

jest.setTimeout(60_000);
const ET = temporal.api.enums.v1.EventType;
let env: TestWorkflowEnvironment;
const taskQueue = `wf-max-duration-${randomUUID()}`;
const rec = recorder();
const activities = () => fakeActivities(() => env, taskQueue, rec);

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

function start(message: string, over: InputFields): Promise<WorkflowHandle> {
  const i = taskInput(message, { joinGraceMs: 300, ownsTurn: true, ...over });
  return env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
}

async function capOf(h: WorkflowHandle): Promise<ApplicationFailure> {
  const err = await h.result().catch((e) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return err.cause as ApplicationFailure;
}

test('a wait longer than max_duration is cut short: the run ends failed with max_duration and a cap’s closing events', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start('wait:30:3', { maxDurationMs: 1500 });
    const cause = await capOf(h);
    expect(cause.type).toBe('max_duration');
    expect(cause.message).toBe('the run reached its max_duration of 1.5 s');
    const partial = cause.details?.[0] as PartialResult;
    expect(partial.events.slice(-2).map((e) => e.type)).toEqual(['agent_cost', 'agent_error']);
    expect(rec.calls[h.workflowId].filter((c) => c === 'modelTurn')).toHaveLength(1);
    expect(await h.query(statusQuery)).toMatchObject({ status: 'failed', error: { type: 'max_duration' } });
    const events = (await h.fetchHistory()).events!;
    // The wait's timer and the deadline's: the first cancelled by the second.
    expect(events.filter((e) => e.eventType === ET.EVENT_TYPE_TIMER_FIRED)).toHaveLength(1);
    expect(events.filter((e) => e.eventType === ET.EVENT_TYPE_TIMER_CANCELED)).toHaveLength(1);
    await save('max-duration', h);
  });
});

test('a model turn in flight is cancelled at the deadline (it heartbeats), not waited for', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    // The fake model takes 10 minutes over a "stuck" message: a run that waited for the turn would hold the test to its timeout.
    const h = await start('stuck one', { maxDurationMs: 1000 });
    expect((await capOf(h)).type).toBe('max_duration');
    const events = (await h.fetchHistory()).events!;
    expect(events.some((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED)).toBe(true);
  });
});

test('a run that answers in time completes as without it; its deadline timer is cancelled', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start('tools:1', { maxDurationMs: 60_000 });
    expect((await h.result()).status).toBe('completed');
    const events = (await h.fetchHistory()).events!;
    expect(events.filter((e) => e.eventType === ET.EVENT_TYPE_TIMER_STARTED)).toHaveLength(1);
    expect(events.filter((e) => e.eventType === ET.EVENT_TYPE_TIMER_CANCELED)).toHaveLength(1);
  });
});

test('a cancel from outside before the deadline is a cancel', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start('wait:30:1', { maxDurationMs: 20_000 });
    // Mid-wait: the deadline's timer and the wait's are both started.
    await waitUntil(
      'the wait timer started',
      async () => (await h.fetchHistory()).events!.filter((e) => e.eventType === ET.EVENT_TYPE_TIMER_STARTED).length,
      (n) => n >= 2,
    );
    await h.cancel();
    await h.result().catch(() => undefined);
    expect(await h.query(statusQuery)).toMatchObject({ status: 'cancelled', error: { type: 'cancelled' } });
  });
});
