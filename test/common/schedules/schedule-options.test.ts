// A schedule entry as Temporal Schedule options, and the ids derived for
// schedules and their tasks (no network).
import { scheduleOptions, ScheduleDraft } from '../../../src/common/schedules/schedule-options';
import { scheduleIdsFor, scheduledTaskId } from '../../../src/common/schedules/schedule-ids';
import { SCHEDULE_ID, TASK_ID } from '../../../src/gateway/schemas/request';

const draft = (over: Partial<ScheduleDraft>): ScheduleDraft => ({
  scheduleId: 'sched_abc',
  when: { kind: 'cron', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' },
  overlap: 'skip',
  memo: {
    account: 'alice',
    session: 'sess_1',
    schedule: '0 9 * * 1-5',
    kind: 'cron',
    timezone: 'Europe/Paris',
    overlap: 'skip',
    preview: 'hi',
    createdAt: '2026-11-26T00:00:00.000Z',
    createdBy: 'task_1',
  },
  run: { scheduleId: 'sched_abc', account: 'alice', session: 'sess_1', request: { message: 'hi' } as never },
  taskQueue: 'agent-tasks',
  ...over,
});

test('a cron entry keeps its expression and time zone, recurs, and starts a scheduledRun with the request', () => {
  const o = scheduleOptions(draft({ overlap: 'buffer_one' }));
  expect(o.spec).toEqual({ cronExpressions: ['0 9 * * 1-5'], timezone: 'Europe/Paris' });
  expect(o.state).toBeUndefined();
  expect(o.policies).toEqual({ overlap: 'BUFFER_ONE' });
  expect(o.action).toMatchObject({
    type: 'startWorkflow',
    workflowType: 'scheduledRun',
    workflowId: 'sched_abc',
    taskQueue: 'agent-tasks',
    args: [draft({}).run],
  });
  expect(o.searchAttributes).toEqual({ TaskAccount: ['alice'], TaskSession: ['sess_1'], TaskSchedule: ['sched_abc'] });
  expect(o.memo).toMatchObject({ account: 'alice', kind: 'cron' });
});

test('a one-time entry is one exact UTC calendar instant, rounded up to the second, with one action', () => {
  const o = scheduleOptions(
    draft({ when: { kind: 'once', at: new Date('2027-02-28T23:59:59.250Z') }, overlap: 'allow_all' }),
  );
  expect(o.spec).toEqual({ calendars: [{ year: 2027, month: 'MARCH', dayOfMonth: 1, hour: 0, minute: 0, second: 0 }] });
  expect(o.state).toEqual({ remainingActions: 1 });
  expect(o.policies).toEqual({ overlap: 'ALLOW_ALL' });
  const exact = scheduleOptions(draft({ when: { kind: 'once', at: new Date('2027-07-04T12:30:05.000Z') } }));
  expect(exact.spec).toEqual({
    calendars: [{ year: 2027, month: 'JULY', dayOfMonth: 4, hour: 12, minute: 30, second: 5 }],
  });
});

test('ids are derived, distinct per entry and per schedule time, and valid in the API', () => {
  const ids = scheduleIdsFor('task_aaa', 3);
  expect(ids).toEqual(scheduleIdsFor('task_aaa', 3));
  expect(new Set([...ids, ...scheduleIdsFor('task_bbb', 3)]).size).toBe(6);
  for (const id of ids) expect(id).toMatch(SCHEDULE_ID);
  const a = scheduledTaskId('sched_x-2026-11-26T09:00:00Z');
  expect(a).toMatch(TASK_ID);
  expect(scheduledTaskId('sched_x-2026-11-26T09:00:00Z')).toBe(a);
  expect(scheduledTaskId('sched_x-2026-11-27T09:00:00Z')).not.toBe(a);
});

test("two runs of one schedule time (two triggers within a second) are two tasks; a run without its run id keeps the workflow id's task", () => {
  const wf = 'sched_x-2026-11-26T09:00:00Z';
  const first = scheduledTaskId(wf, 'run-1');
  expect(first).toMatch(TASK_ID);
  expect(scheduledTaskId(wf, 'run-1')).toBe(first);
  expect(scheduledTaskId(wf, 'run-2')).not.toBe(first);
  expect(scheduledTaskId(wf, 'run-1')).not.toBe(scheduledTaskId(wf));
  expect(scheduledTaskId(wf, undefined)).toBe(scheduledTaskId(wf));
});
