// The time-skipping test server (TestWorkflowEnvironment.createTimeSkipping):
// long sleeps and retry backoffs finish in wall-clock moments, env.sleep and
// getCurrentTime move server time, and time never skips while work is outstanding
// (the Java test server's rule: a running activity holds time at wall pace).
// No test here bounds the wall time: each proves the skip through the server's clock and
// the history's timestamps, and a server that did not skip would wait the hours and days
// for real, which jest's 60 s timeout ends.
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, JAVA_TEST_SERVER, uid } from './harness';
import { runActivity, activityVersusTimer, sleeper, Outcome, Step } from './workflows/activities';
import * as activities from './activities/activities';

const ET = temporal.api.enums.v1.EventType;
type Event = temporal.api.history.v1.IHistoryEvent;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/activities'), activities, timeSkipping: true });
  activities.hooks.envSleep = (ms) => env.env!.sleep(ms);
});
afterAll(async () => {
  await env?.teardown();
});

const events = async (h: WorkflowHandle) => (await h.fetchHistory()).events as Event[];
const timeOf = (evs: Event[], t: number) => tsToMs(evs.find((e) => e.eventType === t)!.eventTime!);
const testService = () => env.env!.connection.testService!;

test('a workflow sleeping 30 days finishes in moments', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(sleeper, {
      args: [30 * DAY],
      taskQueue: env.taskQueue,
      workflowId: uid('ts-sleep'),
    });
    expect(await h.result()).toBe('woke');
    const evs = await events(h);
    expect(timeOf(evs, ET.EVENT_TYPE_TIMER_FIRED) - timeOf(evs, ET.EVENT_TYPE_TIMER_STARTED)).toBeGreaterThanOrEqual(
      30 * DAY,
    );
    await env.replay(h);
  });
});

test('an activity retried 10 times at 1-hour backoff finishes in moments', async () => {
  await env.withWorker(async () => {
    const id = uid('ts-retry');
    const step: Step = {
      name: 'failTimes',
      args: [10],
      options: { startToCloseTimeout: '10s', retry: { initialInterval: '1h', backoffCoefficient: 1 } },
    };
    const h = await env.client.workflow.start(runActivity, { args: [step], taskQueue: env.taskQueue, workflowId: id });
    expect(((await h.result()) as Outcome).ok).toBe(11);
    expect(activities.attempts.get(id)!.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const evs = await events(h);
    expect(
      timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    ).toBeGreaterThanOrEqual(10 * HOUR);
    await env.replay(h);
  });
});

test('env.sleep advances server time, and getCurrentTime shows it', async () => {
  const wall = Date.now();
  const before = await env.env!.currentTimeMs();
  await env.env!.sleep(2 * HOUR);
  const after = await env.env!.currentTimeMs();
  expect(after - before).toBeGreaterThanOrEqual(2 * HOUR);
  // The 2 hours and no more: besides them, server time moved only at wall pace (the wall time
  // these three calls took, plus a second for the two clocks' granularity).
  expect(after - before).toBeLessThan(2 * HOUR + (Date.now() - wall) + 1000);
});

test('getCurrentTime follows a workflow that skipped a day', async () => {
  await env.withWorker(async () => {
    const before = await env.env!.currentTimeMs();
    const h = await env.client.workflow.start(sleeper, {
      args: [DAY],
      taskQueue: env.taskQueue,
      workflowId: uid('ts-day'),
    });
    await h.result();
    expect((await env.env!.currentTimeMs()) - before).toBeGreaterThanOrEqual(DAY);
    await env.replay(h);
  });
});

test('time does not skip while an activity runs: the timer racing it fires after it', async () => {
  await env.withWorker(async () => {
    // A 1 s activity against a 1-hour timer: the rest of the hour is skipped once the activity
    // is done (else the test waits the hour for real, and jest's timeout ends it).
    const step: Step = { name: 'sleepy', args: [1000], options: { startToCloseTimeout: '1m' } };
    const h = await env.client.workflow.start(activityVersusTimer, {
      args: [step, HOUR],
      taskQueue: env.taskQueue,
      workflowId: uid('ts-race'),
    });
    expect(await h.result()).toEqual(['activity', 'timer']);
    const evs = await events(h);
    const completed = evs.find((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)!;
    const fired = evs.find((e) => e.eventType === ET.EVENT_TYPE_TIMER_FIRED)!;
    expect(Number(completed.eventId)).toBeLessThan(Number(fired.eventId));
    // While the activity ran, server time did not jump towards the timer: it took its second
    // at wall pace, far short of the hour; the hour passed (skipped) after it.
    expect(
      timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    ).toBeGreaterThanOrEqual(900);
    expect(timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - timeOf(evs, ET.EVENT_TYPE_TIMER_STARTED)).toBeLessThan(
      HOUR / 2,
    );
    expect(timeOf(evs, ET.EVENT_TYPE_TIMER_FIRED) - timeOf(evs, ET.EVENT_TYPE_TIMER_STARTED)).toBeGreaterThanOrEqual(
      HOUR,
    );
    await env.replay(h);
  });
});

test('an activity that calls env.sleep skips time although it is running (as in the SDK docs)', async () => {
  await env.withWorker(async () => {
    const step: Step = { name: 'envSleep', args: [1_000_000], options: { startToCloseTimeout: '1h' } };
    const h = await env.client.workflow.start(runActivity, {
      args: [step],
      taskQueue: env.taskQueue,
      workflowId: uid('ts-envsleep'),
    });
    expect(((await h.result()) as Outcome).ok).toBe('env-slept');
    const evs = await events(h);
    expect(
      timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) - timeOf(evs, ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    ).toBeGreaterThanOrEqual(1_000_000);
    await env.replay(h);
  });
});

test('while the client holds the lock time runs at wall pace; result() unlocks it', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(sleeper, {
      args: [HOUR],
      taskQueue: env.taskQueue,
      workflowId: uid('ts-locked'),
    });
    // Not awaiting result(): the environment's own lock is held, so the hour does not pass.
    // The timer must be started first (else nothing could be skipped to yet) …
    await waitUntil(
      'the hour timer to be started',
      () => events(h),
      (evs) => evs.some((e) => e.eventType === ET.EVENT_TYPE_TIMER_STARTED),
    );
    // … then a second is let pass on purpose, to show that it did not fire in it.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await events(h)).some((e) => e.eventType === ET.EVENT_TYPE_TIMER_FIRED)).toBe(false);
    expect((await h.describe()).status.name).toBe('RUNNING');
    // result() unlocks: the hour is skipped (a server that did not would keep the test the hour).
    expect(await h.result()).toBe('woke');
    const evs = await events(h);
    expect(timeOf(evs, ET.EVENT_TYPE_TIMER_FIRED) - timeOf(evs, ET.EVENT_TYPE_TIMER_STARTED)).toBeGreaterThanOrEqual(
      HOUR,
    );
    await env.replay(h);
  });
});

test('explicit lock and unlock calls nest; unlocking what is not locked is refused', async () => {
  const ts = testService();
  // The environment starts locked once; one extra lock means one unlock still leaves time locked.
  await ts.lockTimeSkipping({});
  await ts.unlockTimeSkipping({});
  const t0 = await env.env!.currentTimeMs();
  const wall = Date.now();
  // Time let pass on purpose: the server's clock must follow it, no faster.
  await new Promise((r) => setTimeout(r, 300));
  const t1 = await env.env!.currentTimeMs();
  // Locked: server time moved about as much as wall time (not a speed bound: the wall time
  // measured is the limit, a second added for the two clocks' granularity).
  expect(t1 - t0).toBeGreaterThanOrEqual(250);
  expect(t1 - t0).toBeLessThan(Date.now() - wall + 1000);
  await ts.unlockTimeSkipping({});
  // The Java test server holds one more lock of its own while no timer is pending, so
  // there the unbalanced unlock comes a call later; ours counts only the callers' locks.
  if (!JAVA_TEST_SERVER) {
    await expect(ts.unlockTimeSkipping({})).rejects.toThrow();
    await ts.lockTimeSkipping({});
  }
});
