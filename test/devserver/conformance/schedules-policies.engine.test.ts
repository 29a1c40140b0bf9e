// Schedule policies through the SDK's ScheduleClient: overlap policies,
// pause-on-failure, remaining actions, result chaining, backfill, restarts and
// time skipping. Every workflow a schedule starts is replayed.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import { createEnv, Env, JAVA_TEST_SERVER, ON_REAL_SERVER, uid } from './harness';
import { actionIds, expectedId, scheduleSuite, secondsBetween, sleep, startedFor, waitFor, WORKFLOWS } from './schedules-helpers';
import { blocker, chained, failing, releaseSignal, scheduledGreeting } from './workflows/schedules';

const suite = scheduleSuite();

test('overlap SKIP: spec times that come while the last run is going are skipped', async () => {
  const h = await suite.create({ scheduleId: uid('sched-skip'), spec: { intervals: [{ every: '1s' }] }, action: suite.action(blocker), policies: { overlap: ScheduleOverlapPolicy.SKIP } });
  const first = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 1, 'the first action');
  await sleep(2500);
  const d = await h.describe();
  expect(d.info.numActionsTaken).toBe(1);
  expect(d.info.numActionsSkippedOverlap).toBeGreaterThanOrEqual(2);
  expect(d.info.runningActions.map((a) => a.workflow)).toEqual([first.info.recentActions[0].action.workflow]);
  const releasedAt = Date.now();
  await suite.env.client.workflow.getHandle(actionIds(first)[0]).signal(releaseSignal);
  const after = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 2, 'the next action');
  // Nothing was kept from the skipped times: the next run belongs to a spec time after the release.
  expect(after.info.recentActions[1].scheduledAt.getTime()).toBeGreaterThanOrEqual(Math.floor(releasedAt / 1000) * 1000);
  await suite.releaseAndReplay(h);
});

test('overlap BUFFER_ONE: one start waits for the running one and starts as soon as it closes', async () => {
  const h = await suite.create({ scheduleId: uid('sched-buffer-one'), spec: { intervals: [{ every: '2s' }] }, action: suite.action(blocker), policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE } });
  const first = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 1, 'the first action');
  await waitFor(() => h.describe(), (x) => x.info.numActionsSkippedOverlap >= 1, 'a skipped action', 10_000);
  const d = await h.describe();
  expect(d.info.numActionsTaken).toBe(1);
  expect(d.raw.info?.bufferSize?.toNumber()).toBe(1);
  const releasedAt = Date.now();
  await suite.env.client.workflow.getHandle(actionIds(first)[0]).signal(releaseSignal);
  const after = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 2, 'the buffered action');
  const buffered = after.info.recentActions[1];
  // It was due before the release (it waited in the buffer) and started right after it.
  expect(buffered.scheduledAt.getTime()).toBeLessThan(releasedAt);
  expect(buffered.takenAt.getTime() - releasedAt).toBeLessThan(3000);
  expect(buffered.action.workflow.workflowId).toBe(expectedId(first.action.workflowId, buffered.scheduledAt));
  await suite.releaseAndReplay(h);
});

test('overlap ALLOW_ALL: runs overlap freely', async () => {
  const h = await suite.create({ scheduleId: uid('sched-allow-all'), spec: { intervals: [{ every: '1s' }] }, action: suite.action(blocker), policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL } });
  const d = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 3, 'three actions');
  await h.pause('enough');
  expect(d.info.numActionsSkippedOverlap).toBe(0);
  for (const id of actionIds(d).slice(0, 3)) expect((await suite.env.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
  await suite.releaseAndReplay(h);
});

test('overlap TERMINATE_OTHER and CANCEL_OTHER: the running run is stopped for the new one', async () => {
  const term = await suite.create({ scheduleId: uid('sched-terminate'), spec: { intervals: [{ every: '2s' }] }, action: suite.action(blocker), policies: { overlap: ScheduleOverlapPolicy.TERMINATE_OTHER } });
  const cancel = await suite.create({ scheduleId: uid('sched-cancel'), spec: { intervals: [{ every: '2s' }] }, action: suite.action(blocker), policies: { overlap: ScheduleOverlapPolicy.CANCEL_OTHER } });
  for (const [h, closed] of [
    [term, 'TERMINATED'],
    [cancel, 'CANCELLED'],
  ] as const) {
    const d = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 2, 'two actions');
    const [firstId, secondId] = actionIds(d);
    expect((await suite.env.client.workflow.getHandle(firstId).describe()).status.name).toBe(closed);
    expect((await suite.env.client.workflow.getHandle(secondId).describe()).status.name).toMatch(/RUNNING|TERMINATED|CANCELLED/);
  }
  await suite.releaseAndReplay(term);
  await suite.releaseAndReplay(cancel);
});

test('pauseOnFailure pauses the schedule when a run fails', async () => {
  const h = await suite.create({ scheduleId: uid('sched-fail'), spec: { intervals: [{ every: '1s' }] }, action: suite.action(failing), policies: { pauseOnFailure: true } });
  const d = await waitFor(() => h.describe(), (x) => x.state.paused, 'the pause', 15_000);
  const failedId = actionIds(d)[0];
  expect(d.state.note).toContain(failedId);
  expect(d.state.note).toContain('failure');
  const taken = d.info.numActionsTaken;
  await sleep(2000);
  expect((await h.describe()).info.numActionsTaken).toBe(taken);
  await expect(suite.env.client.workflow.getHandle(failedId).result()).rejects.toThrow();
  await suite.replayAll(actionIds(d));
});

test('remainingActions limits the actions taken', async () => {
  const h = await suite.create({ scheduleId: uid('sched-limited'), spec: { intervals: [{ every: '1s' }] }, action: suite.action(scheduledGreeting, ['limited']), state: { remainingActions: 2 } });
  const d = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 2, 'two actions');
  await sleep(2000);
  const later = await h.describe();
  expect(later.info.numActionsTaken).toBe(2);
  expect(later.state.remainingActions).toBe(0);
  expect(later.info.nextActionTimes).toEqual([]);
  await suite.replayAll(actionIds(d));
});

test('each scheduled run sees the previous run result', async () => {
  const h = await suite.create({ scheduleId: uid('sched-chain'), spec: { intervals: [{ every: '1s' }] }, action: suite.action(chained) });
  const d = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 3, 'three actions');
  await h.pause('enough');
  const results = [];
  for (const id of actionIds(d).slice(0, 3)) results.push(await suite.env.client.workflow.getHandle(id).result());
  expect(results).toEqual([1, 2, 3]);
  await suite.replayAll(actionIds(d));
});

test('backfill takes the actions of a past range, start included', async () => {
  const wf = suite.action(scheduledGreeting, ['backfill']);
  const h = await suite.create({ scheduleId: uid('sched-backfill'), spec: { intervals: [{ every: '1m' }] }, action: wf, state: { paused: true } });
  const end = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
  const start = new Date(end.getTime() - 3 * 60_000);
  await h.backfill({ start, end, overlap: ScheduleOverlapPolicy.ALLOW_ALL });
  const d = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 4, 'four backfilled actions');
  const expected = [0, 1, 2, 3].map((i) => expectedId(wf.workflowId, new Date(start.getTime() + i * 60_000)));
  expect(actionIds(d).sort()).toEqual(expected);
  for (const id of expected) expect(await suite.env.client.workflow.getHandle(id).result()).toBe('hello backfill');
  await suite.replayAll(expected);
});

test('schedules survive a restart: state, running workflow and timer resume', async () => {
  const dbFilename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sched-')), 'temporal.db');
  let first: Env | undefined = await createEnv({ workflowsPath: WORKFLOWS, dbFilename });
  const taskQueue = first.taskQueue;
  const scheduleId = uid('sched-restart');
  const wf = { ...suite.action(blocker), taskQueue };
  const catchupWf = { ...wf, workflowId: uid('wf') };
  let before: ScheduleDescription;
  let unpausedAt = 0;
  let onceAt = 0;
  let stoppedAt = 0;
  try {
    const h = await first.client.schedule.create({ scheduleId, spec: { intervals: [{ every: '1s' }] }, action: wf, memo: { kept: true } });
    // A second schedule that only accepts actions up to 10 s late.
    const catchup = await first.client.schedule.create({
      scheduleId: `${scheduleId}-catchup`,
      spec: { intervals: [{ every: '1s' }] },
      action: catchupWf,
      policies: { catchupWindow: '10s', overlap: ScheduleOverlapPolicy.ALLOW_ALL },
      state: { paused: true },
    });
    before = await first.withWorker(() => waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 1, 'the first action'));
    unpausedAt = Date.now();
    await catchup.unpause();
    // The real scheduler applies a patch in its next workflow task (which Describe waits
    // for); one still pending at the stop would apply only after the downtime.
    await waitFor(() => catchup.describe(), (x) => !x.state.paused, 'the unpause');
    // A third one whose only spec time in the next minute falls in the downtime.
    onceAt = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const once = await first.client.schedule.create({
      scheduleId: `${scheduleId}-once`,
      spec: { intervals: [{ every: '60s', offset: onceAt % 60_000 }] },
      action: { ...wf, workflowId: uid('wf') },
      policies: { catchupWindow: '10s' },
    });
    // The real scheduler counts time from its first workflow task, which Describe waits for.
    await once.describe();
    await first.teardown();
    stoppedAt = Date.now();
    first = undefined;
  } finally {
    await first?.teardown();
  }
  // Down for longer than the catchup window, even counted from onceAt.
  await sleep(16_000);
  const second = await createEnv({ workflowsPath: WORKFLOWS, dbFilename });
  const restartedAt = Date.now();
  try {
    const catchup = second.client.schedule.getHandle(`${scheduleId}-catchup`);
    const once = second.client.schedule.getHandle(`${scheduleId}-once`);
    // Only a server started here was really down (one at TEMPORAL_ADDRESS kept running).
    if (!process.env.TEMPORAL_ADDRESS) {
      expect(stoppedAt).toBeLessThan(onceAt);
      // The scheduler catches up when its timer fires after the restart (the real
      // server's timer queue takes a moment to resume), not necessarily at once.
      const c = await waitFor(() => catchup.describe(), (x) => x.info.numActionsMissedCatchupWindow >= 1, 'the missed actions');
      const missedCount = c.info.numActionsMissedCatchupWindow;
      // Each spec time of the downtime was handled at recovery: the older ones missed, the rest taken.
      const downtime = secondsBetween(stoppedAt, restartedAt);
      const started = await Promise.all(downtime.map((t) => startedFor(second.client, catchupWf.workflowId, t)));
      const firstTaken = started.findIndex((t) => t !== undefined);
      expect(firstTaken).toBeGreaterThanOrEqual(1);
      expect(started.slice(firstTaken).every((t) => t !== undefined)).toBe(true);
      // Most of the catch-up window's times taken: on a loaded machine the recovery may run a few
      // seconds after the restart, and the times more than 10 s old by then are missed (7 seen in CI).
      expect(downtime.length - firstTaken).toBeGreaterThanOrEqual(5);
      // The recovery ran over 10 s after the last missed time and within 10 s of the first
      // taken one (plus the time to start it).
      const lateness = started[firstTaken]! - downtime[firstTaken];
      expect(lateness).toBeGreaterThan(9000);
      expect(lateness).toBeLessThan(12_000);
      // Counted once each: none before the unpause, all those of the downtime.
      expect(missedCount).toBeGreaterThanOrEqual(firstTaken);
      expect(missedCount).toBeLessThanOrEqual(secondsBetween(unpausedAt, downtime[firstTaken]).length);

      const o = await waitFor(() => once.describe(), (x) => x.info.numActionsMissedCatchupWindow >= 1, 'the missed minute');
      expect(o.info.numActionsTaken).toBe(0);
      // A later wake (the pause) must not count it again.
      await once.pause('done');
      const onceMissed = (await once.describe()).info.numActionsMissedCatchupWindow;
      // Deliberately unlike the real server: its workflow scheduler (v1) keeps its mark at the
      // last time it took, so a missed time is counted again at every wake until a later time
      // is taken (the count then depends on unrelated signals and closes). Its CHASM scheduler
      // counts it once, as we do.
      if (!ON_REAL_SERVER) expect(onceMissed).toBe(1);
    }
    await catchup.pause('done');
    await once.delete();
    const h = second.client.schedule.getHandle(scheduleId);
    const d = await h.describe();
    expect(d.info.createdAt).toEqual(before.info.createdAt);
    expect(d.memo).toEqual({ kept: true });
    expect(d.spec.intervals).toEqual([{ every: 1000 }]);
    expect(actionIds(d)[0]).toBe(actionIds(before)[0]);
    // The run it started is still the one it waits for.
    expect(d.info.runningActions.map((a) => a.workflow.workflowId)).toEqual([actionIds(before)[0]]);
    await second.withWorker(
      async () => {
        await second.client.workflow.getHandle(actionIds(before)[0]).signal(releaseSignal);
        const after = await waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 2, 'an action after the restart');
        await h.pause('done');
        for (const id of actionIds(after)) {
          const run = second.client.workflow.getHandle(id);
          if ((await run.describe()).status.name === 'RUNNING') await run.signal(releaseSignal);
          expect(await run.result()).toBe('released');
          await second.replay(run);
        }
      },
      { taskQueue },
    );
    await h.delete();
    await second.withWorker(
      async () => {
        for (const id of actionIds(await catchup.describe())) {
          const run = second.client.workflow.getHandle(id);
          await run.signal(releaseSignal).catch(() => undefined);
          expect(await run.result()).toBe('released');
          await second.replay(run);
        }
      },
      { taskQueue },
    );
    await catchup.delete();
  } finally {
    await second.teardown();
  }
}, 90_000);

// The Java test server serves no schedules (CreateSchedule is UNIMPLEMENTED there); ours does.
(JAVA_TEST_SERVER ? test.skip : test)('under the time-skipping server an hourly schedule fires as virtual time passes', async () => {
  const ts = await createEnv({ workflowsPath: WORKFLOWS, timeSkipping: true });
  try {
    const wf = { ...suite.action(scheduledGreeting, ['skipped']), taskQueue: ts.taskQueue };
    const h = await ts.client.schedule.create({ scheduleId: uid('sched-skip-time'), spec: { intervals: [{ every: '1h' }] }, action: wf });
    const startedAt = await ts.env!.currentTimeMs();
    const d = await ts.withWorker(async () => {
      await ts.env!.sleep('3h');
      return waitFor(() => h.describe(), (x) => x.info.numActionsTaken >= 3, 'three hourly actions');
    });
    await h.pause('done');
    const times = d.info.recentActions.slice(0, 3).map((a) => a.scheduledAt.getTime());
    for (const t of times) expect(t % 3600_000).toBe(0);
    expect(times[0]).toBeGreaterThan(startedAt);
    expect(times[2] - times[0]).toBe(2 * 3600_000);
    for (const id of actionIds(d).slice(0, 3)) {
      expect(await ts.client.workflow.getHandle(id).result()).toBe('hello skipped');
      await ts.replay(ts.client.workflow.getHandle(id));
    }
  } finally {
    await ts.teardown();
  }
});
