// Schedules API through the SDK's ScheduleClient: pause, trigger, backfill, update, delete, list
// and the raw RPC errors. Specs and firing: schedules.engine.test.ts; policies:
// schedules-policies.engine.test.ts. Every workflow a schedule starts is replayed.
import { status as grpcStatus } from '@grpc/grpc-js';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { ON_REAL_SERVER, uid } from './harness';
import { waitUntil } from '../support/wait-until';
import { actionIds, CustomKeyword, expectedId, scheduleSuite, sleep } from './schedules-helpers';
import { blocker, releaseSignal, scheduledGreeting } from './workflows/schedules';

const suite = scheduleSuite();

test('pause stops actions and unpause resumes them; notes are kept', async () => {
  const h = await suite.create({
    scheduleId: uid('sched-pause'),
    spec: { intervals: [{ every: '1s' }] },
    action: suite.action(scheduledGreeting, ['paused']),
    state: { paused: true, note: 'start paused' },
  });
  // Two spec times let pass on purpose: a paused schedule must take no action in them.
  await sleep(2500);
  let d = await h.describe();
  expect(d.info.numActionsTaken).toBe(0);
  expect(d.state).toMatchObject({ paused: true, note: 'start paused' });
  await h.unpause('go');
  d = await waitUntil(
    'an action after unpause',
    () => h.describe(),
    (x) => x.info.numActionsTaken >= 1,
  );
  expect(d.state).toMatchObject({ paused: false, note: 'go' });
  await h.pause('stop again');
  const paused = await h.describe();
  expect(paused.state).toMatchObject({ paused: true, note: 'stop again' });
  // Two spec times let pass on purpose: paused again, it must take no new action in them.
  await sleep(2500);
  const later = await h.describe();
  // At most one action could have been in flight when the pause arrived.
  expect(later.info.numActionsTaken).toBeLessThanOrEqual(paused.info.numActionsTaken + 1);
  await waitUntil(
    'no running actions',
    () => h.describe(),
    (x) => x.info.runningActions.length === 0,
  );
  await suite.replayAll(actionIds(later));
});

test('trigger starts the action now, even when paused and far from the next spec time', async () => {
  const wf = suite.action(scheduledGreeting, ['triggered']);
  const h = await suite.create({
    scheduleId: uid('sched-trigger'),
    spec: { calendars: [{ year: 2099, month: 'JANUARY', dayOfMonth: 1, hour: 0 }] },
    action: wf,
    state: { paused: true },
  });
  const before = Date.now();
  await h.trigger();
  const d = await waitUntil(
    'the triggered action',
    () => h.describe(),
    (x) => x.info.numActionsTaken === 1,
  );
  const [a] = d.info.recentActions;
  expect(a.scheduledAt.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
  expect(a.action.workflow.workflowId).toBe(expectedId(wf.workflowId, a.scheduledAt));
  expect(await suite.env.client.workflow.getHandle(a.action.workflow.workflowId).result()).toBe('hello triggered');
  expect(d.info.nextActionTimes[0].toISOString()).toBe('2099-01-01T00:00:00.000Z');
  await suite.replayAll(actionIds(d));
});

test('a trigger within the second of an earlier triggered run, after that run ended, is another run of the same workflow id', async () => {
  const wf = suite.action(scheduledGreeting, ['twice']);
  const h = await suite.create({
    scheduleId: uid('sched-trigger-second'),
    spec: { calendars: [{ year: 2099, month: 'JANUARY', dayOfMonth: 1, hour: 0 }] },
    action: wf,
  });
  // Up to three tries for a second trigger inside the first one's second (the run takes a few ms).
  let inSecond = false;
  for (let taken = 0, tries = 0; !inSecond && tries < 3; tries++) {
    await sleep(1000 - (Date.now() % 1000));
    const second = Math.floor(Date.now() / 1000);
    await h.trigger();
    taken++;
    const d = await waitUntil(
      'the triggered action',
      () => h.describe(),
      (x) => x.info.numActionsTaken === taken,
    );
    const first = d.info.recentActions[d.info.recentActions.length - 1].action.workflow;
    await suite.env.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId).result();
    // Too late in this second to be sure the next trigger lands in it: try again.
    if (Math.floor(Date.now() / 1000) !== second || Date.now() % 1000 > 800) continue;
    await h.trigger();
    inSecond = true;
    // A trigger in a later second, surely taken: once it is, the one before it was handled.
    await sleep(1000 - (Date.now() % 1000) + 50);
    const later = Math.floor(Date.now() / 1000) * 1000;
    await h.trigger();
    const after = await waitUntil(
      'the later trigger taken',
      () => h.describe(),
      (x) => x.info.recentActions.some((a) => a.scheduledAt.getTime() >= later),
    );
    // The real server's rule: the id names the second, and a manual start may reuse a closed one's.
    const inFirst = after.info.recentActions
      .filter((a) => Math.floor(a.scheduledAt.getTime() / 1000) === second)
      .map((a) => a.action.workflow);
    expect(inFirst).toHaveLength(2);
    expect(inFirst[1].workflowId).toBe(inFirst[0].workflowId);
    expect(inFirst[1].firstExecutionRunId).not.toBe(inFirst[0].firstExecutionRunId);
    expect(after.info.numActionsTaken).toBe(taken + 2);
    taken = after.info.numActionsTaken;
  }
  expect(inSecond).toBe(true);
  await suite.replayAll(actionIds(await h.describe()));
});
test('create with triggerImmediately and backfill takes those actions at once', async () => {
  const wf = suite.action(scheduledGreeting, ['initial']);
  const end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  const start = new Date(end.getTime() - 3600_000);
  const h = await suite.create({
    scheduleId: uid('sched-initial'),
    spec: { intervals: [{ every: '1h' }] },
    action: wf,
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    state: { triggerImmediately: true, backfill: [{ start, end }] },
  });
  const d = await waitUntil(
    'the trigger and two backfilled actions',
    () => h.describe(),
    (x) => x.info.numActionsTaken >= 3,
  );
  const ids = actionIds(d);
  expect(ids).toEqual(expect.arrayContaining([expectedId(wf.workflowId, start), expectedId(wf.workflowId, end)]));
  expect(d.info.numActionsTaken).toBe(3);
  for (const id of ids) expect(await suite.env.client.workflow.getHandle(id).result()).toBe('hello initial');
  await suite.replayAll(ids);
});

test('update replaces spec and action; the next start uses them', async () => {
  const h = await suite.create({
    scheduleId: uid('sched-update'),
    spec: { intervals: [{ every: '1h' }] },
    action: suite.action(scheduledGreeting, ['old']),
    state: { paused: true },
  });
  const before = await h.describe();
  await h.update((prev) => ({
    ...prev,
    spec: { cronExpressions: ['30 4 * * *'] },
    action: { ...prev.action, args: ['new'] } as typeof prev.action,
    policies: { ...prev.policies, overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    state: { ...prev.state, note: 'updated' },
  }));
  const d = await h.describe();
  expect(d.spec.intervals).toEqual([]);
  expect(d.spec.calendars?.[0]).toMatchObject({
    minute: [{ start: 30, end: 30, step: 1 }],
    hour: [{ start: 4, end: 4, step: 1 }],
  });
  expect(d.policies.overlap).toBe(ScheduleOverlapPolicy.ALLOW_ALL);
  expect(d.state).toMatchObject({ paused: true, note: 'updated' });
  expect(d.info.lastUpdatedAt).toBeInstanceOf(Date);
  expect(d.info.lastUpdatedAt!.getTime()).toBeGreaterThanOrEqual(before.info.createdAt.getTime());
  for (const t of d.info.nextActionTimes) expect([t.getUTCHours(), t.getUTCMinutes()]).toEqual([4, 30]);
  await h.trigger();
  const after = await waitUntil(
    'the triggered action',
    () => h.describe(),
    (x) => x.info.numActionsTaken === 1,
  );
  const id = after.info.recentActions[0].action.workflow.workflowId;
  expect(await suite.env.client.workflow.getHandle(id).result()).toBe('hello new');
  await suite.replayAll([id]);
});

test('delete removes the schedule; its running workflows carry on', async () => {
  const h = await suite.env.client.schedule.create({
    scheduleId: uid('sched-delete'),
    spec: { intervals: [{ every: '1h' }] },
    action: suite.action(blocker),
    state: { paused: true },
  });
  await h.trigger();
  const d = await waitUntil(
    'the triggered action',
    () => h.describe(),
    (x) => x.info.numActionsTaken === 1,
  );
  await h.delete();
  await expect(h.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  await expect(h.delete()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  const run = suite.env.client.workflow.getHandle(d.info.recentActions[0].action.workflow.workflowId);
  expect((await run.describe()).status.name).toBe('RUNNING');
  await run.signal(releaseSignal);
  expect(await run.result()).toBe('released');
  await suite.env.replay(run);
});

test('list shows schedules with memo, search attributes and info; query and pagination work', async () => {
  const tag = uid('list');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const h = await suite.create({
      scheduleId: `${tag}-${i}`,
      spec: { intervals: [{ every: '1h' }] },
      action: suite.action(scheduledGreeting),
      memo: { index: i },
      typedSearchAttributes: [{ key: CustomKeyword, value: tag }],
      state: { paused: i === 2, note: i === 2 ? 'resting' : undefined },
    });
    ids.push(h.scheduleId);
  }
  const listAll = async () => {
    const out = [];
    for await (const s of suite.env.client.schedule.list({ query: `CustomKeyword = '${tag}'` })) out.push(s);
    return out;
  };
  const listed = await waitUntil('three listed schedules', listAll, (xs) => xs.length === 3);
  expect(listed.map((s) => s.scheduleId).sort()).toEqual(ids);
  for (const s of listed) {
    const i = ids.indexOf(s.scheduleId);
    expect(s.memo).toEqual({ index: i });
    expect(s.typedSearchAttributes?.get(CustomKeyword)).toBe(tag);
    expect(s.action).toEqual({ type: 'startWorkflow', workflowType: 'scheduledGreeting' });
    expect(s.spec?.intervals).toEqual([{ every: 3600_000 }]);
    expect(s.state).toEqual({ paused: i === 2, note: i === 2 ? 'resting' : '' });
    expect(s.info.nextActionTimes.length).toBe(5);
  }
  const paused = await waitUntil(
    'the paused schedule',
    async () => {
      const out = [];
      for await (const s of suite.env.client.schedule.list({
        query: `CustomKeyword = '${tag}' AND TemporalSchedulePaused = true`,
      }))
        out.push(s.scheduleId);
      return out;
    },
    (xs) => xs.length === 1,
  );
  expect(paused).toEqual([ids[2]]);
  // One page at a time through the raw API.
  const page1 = await suite.env.client.workflowService.listSchedules({
    namespace: suite.env.namespace,
    maximumPageSize: 2,
    query: `CustomKeyword = '${tag}'`,
  });
  expect(page1.schedules).toHaveLength(2);
  expect(page1.nextPageToken?.length).toBeGreaterThan(0);
  const page2 = await suite.env.client.workflowService.listSchedules({
    namespace: suite.env.namespace,
    maximumPageSize: 2,
    query: `CustomKeyword = '${tag}'`,
    nextPageToken: page1.nextPageToken,
  });
  expect([...page1.schedules!, ...page2.schedules!].map((s) => s.scheduleId).sort()).toEqual(ids);
});

test('raw API: conflict tokens, patch validation and NOT_FOUND on every schedule RPC', async () => {
  const ws = suite.env.client.workflowService;
  const scheduleId = uid('sched-raw');
  await suite.create({ scheduleId, spec: { intervals: [{ every: '1h' }] }, action: suite.action(scheduledGreeting) });
  const desc = await ws.describeSchedule({ namespace: suite.env.namespace, scheduleId });
  expect(desc.conflictToken?.length).toBeGreaterThan(0);
  const patchErr = await ws.patchSchedule({ namespace: suite.env.namespace, scheduleId }).catch((e) => e);
  expect(patchErr.code).toBe(grpcStatus.INVALID_ARGUMENT);
  const cron = await ws
    .createSchedule({
      namespace: suite.env.namespace,
      scheduleId: uid('cron'),
      requestId: uid('r'),
      schedule: {
        ...desc.schedule,
        action: { startWorkflow: { ...desc.schedule!.action!.startWorkflow, cronSchedule: '* * * * *' } },
      },
    })
    .catch((e) => e);
  expect(cron.code).toBe(grpcStatus.INVALID_ARGUMENT);
  // Workflow-backed schedules on a real server take updates as signals and drop a stale
  // one silently; the embedded server answers like the newer (CHASM) scheduler instead.
  if (!ON_REAL_SERVER) {
    const stale = Buffer.alloc(8);
    stale.writeBigUInt64BE(99n);
    const conflict = await ws
      .updateSchedule({ namespace: suite.env.namespace, scheduleId, schedule: desc.schedule, conflictToken: stale })
      .catch((e) => e);
    expect(conflict.code).toBe(grpcStatus.FAILED_PRECONDITION);
    await ws.updateSchedule({
      namespace: suite.env.namespace,
      scheduleId,
      schedule: desc.schedule,
      conflictToken: desc.conflictToken,
    });
  }
  await ws.patchSchedule({ namespace: suite.env.namespace, scheduleId, patch: { pause: 'bump' } });
  const after = await ws.describeSchedule({ namespace: suite.env.namespace, scheduleId });
  expect(Buffer.from(after.conflictToken!).equals(Buffer.from(desc.conflictToken!))).toBe(false);
  const missing = uid('missing');
  for (const call of [
    () => ws.patchSchedule({ namespace: suite.env.namespace, scheduleId: missing, patch: { pause: 'x' } }),
    () => ws.updateSchedule({ namespace: suite.env.namespace, scheduleId: missing, schedule: desc.schedule }),
    () => ws.deleteSchedule({ namespace: suite.env.namespace, scheduleId: missing }),
  ]) {
    expect((await call().catch((e) => e)).code).toBe(grpcStatus.NOT_FOUND);
  }
  // A request retried with the same request id is answered like the first one.
  const requestId = uid('req');
  const again = uid('sched-retried');
  const req = { namespace: suite.env.namespace, scheduleId: again, requestId, schedule: desc.schedule };
  await ws.createSchedule(req);
  await ws.createSchedule(req);
  expect((await ws.createSchedule({ ...req, requestId: uid('other') }).catch((e) => e)).code).toBe(
    grpcStatus.ALREADY_EXISTS,
  );
  await suite.env.client.schedule.getHandle(again).delete();
});
