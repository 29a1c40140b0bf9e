// Schedules API through the SDK's ScheduleClient: specs and their canonical form, time zones,
// the create errors, and firing. Pause, trigger, update, delete, list and the raw RPC errors:
// schedules-manage.engine.test.ts; policies: schedules-policies.engine.test.ts. Every workflow a
// schedule starts is replayed.
import { status as grpcStatus } from '@grpc/grpc-js';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { msToTs, tsToMs } from '@temporalio/common/lib/time';
import { uid } from './harness';
import { waitUntil } from '../support/wait-until';
import { actionIds, CustomKeyword, expectedId, scheduleSuite } from './schedules-helpers';
import { scheduledGreeting } from './workflows/schedules';

const suite = scheduleSuite();

test('create and describe round-trip the schedule, with the spec in canonical form', async () => {
  const scheduleId = uid('sched-describe');
  const wf = suite.action(scheduledGreeting, ['describe']);
  const h = await suite.create({
    scheduleId,
    spec: {
      cronExpressions: ['0 12 * * MON-FRI'],
      calendars: [{ hour: 3, minute: [0, 30], comment: 'twice at three' }],
      intervals: [{ every: '90m', offset: '5m' }],
      timezone: 'Europe/Paris',
      jitter: '2s',
    },
    action: { ...wf, memo: { inAction: 'yes' }, typedSearchAttributes: [{ key: CustomKeyword, value: 'from-action' }] },
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '5m', pauseOnFailure: true },
    state: { paused: true, note: 'created paused', remainingActions: 7 },
    memo: { owner: 'conformance' },
    typedSearchAttributes: [{ key: CustomKeyword, value: 'describe-me' }],
  });
  const d = await h.describe();
  expect(d.scheduleId).toBe(scheduleId);
  // The cron string and the calendar come back as structured calendars, ranges filled in.
  expect(d.spec.calendars).toEqual([
    {
      second: [{ start: 0, end: 0, step: 1 }],
      minute: [
        { start: 0, end: 0, step: 1 },
        { start: 30, end: 30, step: 1 },
      ],
      hour: [{ start: 3, end: 3, step: 1 }],
      dayOfMonth: [{ start: 1, end: 31, step: 1 }],
      month: [{ start: 'JANUARY', end: 'DECEMBER', step: 1 }],
      year: [],
      dayOfWeek: [{ start: 'SUNDAY', end: 'SATURDAY', step: 1 }],
      comment: 'twice at three',
    },
    {
      second: [{ start: 0, end: 0, step: 1 }],
      minute: [{ start: 0, end: 0, step: 1 }],
      hour: [{ start: 12, end: 12, step: 1 }],
      dayOfMonth: [{ start: 1, end: 31, step: 1 }],
      month: [{ start: 'JANUARY', end: 'DECEMBER', step: 1 }],
      year: [],
      dayOfWeek: [{ start: 'MONDAY', end: 'FRIDAY', step: 1 }],
      comment: '',
    },
  ]);
  expect(d.spec.intervals).toEqual([{ every: 90 * 60_000, offset: 5 * 60_000 }]);
  expect(d.spec.timezone).toBe('Europe/Paris');
  expect(d.spec.jitter).toBe(2000);
  expect(d.action).toMatchObject({
    type: 'startWorkflow',
    workflowType: 'scheduledGreeting',
    workflowId: wf.workflowId,
    taskQueue: suite.env.taskQueue,
    args: ['describe'],
    memo: { inAction: 'yes' },
  });
  expect((d.action.typedSearchAttributes as TypedSearchAttributes).get(CustomKeyword)).toBe('from-action');
  expect(d.policies).toEqual({
    overlap: ScheduleOverlapPolicy.BUFFER_ONE,
    catchupWindow: 5 * 60_000,
    pauseOnFailure: true,
  });
  expect(d.state).toEqual({ paused: true, note: 'created paused', remainingActions: 7 });
  expect(d.memo).toEqual({ owner: 'conformance' });
  expect(d.typedSearchAttributes.get(CustomKeyword)).toBe('describe-me');
  expect(d.info.numActionsTaken).toBe(0);
  expect(d.info.recentActions).toEqual([]);
  expect(d.info.runningActions).toEqual([]);
  expect(d.info.lastUpdatedAt).toBeUndefined();
  // A sanity check that the server stamped the creation with its clock (not a speed claim: the
  // margin, 10 s either way, is far wider than any call takes; a wrong stamp is off by far more).
  expect(Math.abs(d.info.createdAt.getTime() - Date.now())).toBeLessThan(10_000);
  // Limited to the remaining actions; every time in the future and in order.
  expect(d.info.nextActionTimes).toHaveLength(7);
  const times = d.info.nextActionTimes.map((t) => t.getTime());
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  expect(times[0]).toBeGreaterThan(Date.now() - 1000);

  // Defaults are filled in: SKIP and a one-year catchup window.
  const plain = await suite.create({
    scheduleId: uid('sched-defaults'),
    spec: { intervals: [{ every: '1h' }] },
    action: suite.action(scheduledGreeting),
  });
  expect((await plain.describe()).policies).toEqual({
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindow: 365 * 24 * 3600_000,
    pauseOnFailure: false,
  });
});

test('cron in a time zone: the next action times are 09:00 New York time on consecutive days', async () => {
  const h = await suite.create({
    scheduleId: uid('sched-cron-tz'),
    spec: { cronExpressions: ['0 9 * * *'], timezone: 'America/New_York' },
    action: suite.action(scheduledGreeting),
  });
  const d = await h.describe();
  expect(d.info.nextActionTimes).toHaveLength(10);
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/New_York',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const dayFmt = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/New_York',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  const days = new Set<string>();
  for (const t of d.info.nextActionTimes) {
    expect(fmt.format(t)).toBe('09:00:00');
    days.add(dayFmt.format(t));
  }
  expect(days.size).toBe(10);
  const first = d.info.nextActionTimes[0].getTime();
  expect(first).toBeGreaterThan(Date.now());
  expect(first).toBeLessThanOrEqual(Date.now() + 25 * 3600_000);

  // ListScheduleMatchingTimes agrees with Describe.
  const res = await suite.env.client.workflowService.listScheduleMatchingTimes({
    namespace: suite.env.namespace,
    scheduleId: h.scheduleId,
    startTime: msToTs(Date.now()),
    endTime: msToTs(Date.now() + 3 * 24 * 3600_000),
  });
  const matching = (res.startTime ?? []).map((t) => tsToMs(t));
  expect(matching).toEqual(d.info.nextActionTimes.slice(0, matching.length).map((t) => t.getTime()));
  expect(matching.length).toBeGreaterThanOrEqual(2);
  expect(matching.length).toBeLessThanOrEqual(3);
});

test('errors: duplicate id, bad spec, unknown schedule', async () => {
  const scheduleId = uid('sched-errors');
  await suite.create({ scheduleId, spec: { intervals: [{ every: '1h' }] }, action: suite.action(scheduledGreeting) });
  await expect(
    suite.env.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1h' }] },
      action: suite.action(scheduledGreeting),
    }),
  ).rejects.toBeInstanceOf(ScheduleAlreadyRunning);
  // The SDK turns the server's "Invalid schedule spec: ..." into a TypeError.
  await expect(
    suite.env.client.schedule.create({
      scheduleId: uid('bad'),
      spec: { cronExpressions: ['61 * * * *'] },
      action: suite.action(scheduledGreeting),
    }),
  ).rejects.toBeInstanceOf(TypeError);
  await expect(suite.env.client.schedule.getHandle(uid('missing')).describe()).rejects.toBeInstanceOf(
    ScheduleNotFoundError,
  );
  const err = await suite.env.client.workflowService
    .describeSchedule({ namespace: suite.env.namespace, scheduleId: uid('missing') })
    .catch((e) => e);
  expect(err.code).toBe(grpcStatus.NOT_FOUND);
});

test('an interval schedule starts workflows at the interval, with the scheduler ids and search attributes', async () => {
  const wf = {
    ...suite.action(scheduledGreeting, ['interval']),
    memo: { from: 'action' },
    typedSearchAttributes: [{ key: CustomKeyword, value: 'scheduled' }],
  };
  // ALLOW_ALL, so a slow first run cannot make the next spec time be skipped.
  const h = await suite.create({
    scheduleId: uid('sched-interval'),
    spec: { intervals: [{ every: '2s' }] },
    action: wf,
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
  });
  const d = await waitUntil(
    'two actions',
    () => h.describe(),
    (x) => x.info.numActionsTaken >= 2,
    { timeoutMs: 20_000 },
  );
  await h.pause('enough');
  const recent = d.info.recentActions.slice(0, 2);
  for (const a of recent) {
    // Interval times count from the epoch, so they sit on multiples of the interval.
    expect(a.scheduledAt.getTime() % 2000).toBe(0);
    expect(a.takenAt.getTime()).toBeGreaterThanOrEqual(a.scheduledAt.getTime());
    expect(a.action.workflow.workflowId).toBe(expectedId(wf.workflowId, a.scheduledAt));
    const handle = suite.env.client.workflow.getHandle(a.action.workflow.workflowId);
    expect(await handle.result()).toBe('hello interval');
    const desc = await handle.describe();
    expect(desc.runId).toBe(a.action.workflow.firstExecutionRunId);
    expect(desc.searchAttributes.TemporalScheduledById).toEqual([h.scheduleId]);
    expect((desc.searchAttributes.TemporalScheduledStartTime as Date[])[0].getTime()).toBe(a.scheduledAt.getTime());
    // Memo and search attributes of the action reach every run.
    expect(desc.memo).toEqual({ from: 'action' });
    expect(desc.typedSearchAttributes.get(CustomKeyword)).toBe('scheduled');
  }
  expect(recent[1].scheduledAt.getTime() - recent[0].scheduledAt.getTime()).toBe(2000);
  // Describe of the started run shows the scheduler as the starter.
  const history = await suite.env.client.workflow.getHandle(recent[0].action.workflow.workflowId).fetchHistory();
  expect(history.events?.[0].workflowExecutionStartedEventAttributes?.identity).toBe(
    `temporal-scheduler-${suite.env.namespace}-${h.scheduleId}`,
  );
  await suite.replayAll(actionIds(await h.describe()));
});
