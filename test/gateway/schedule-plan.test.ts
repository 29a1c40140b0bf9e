// A run request's schedule entries read before anything starts: every bad
// entry named in one 422 (the document says only "a string"; no network: plan
// needs no Temporal call).
import { ScheduleService } from '../../src/gateway/services/schedule-service';
import { UnprocessableRequestError } from '../../src/common/errors';

const service = new ScheduleService(undefined as never, undefined as never, {
  TEMPORAL_TASK_QUEUE: 'q',
  TEMPORAL_NAMESPACE: 'default',
});
const now = new Date('2026-11-26T12:00:00.000Z');

test('good entries are read into their times', () => {
  const plan = service.plan(
    [
      { schedule: 90, message: 'a' },
      { schedule: '2026-11-27T08:00:00+01:00', message: 'b' },
      { schedule: '*/15  9-17 * * MON-FRI', message: 'c', timezone: 'Asia/Tokyo', overlap: 'allow_all' },
    ],
    now,
  );
  expect(plan.entries.map((e) => e.when)).toEqual([
    { kind: 'once', at: new Date('2026-11-26T12:01:30.000Z') },
    { kind: 'once', at: new Date('2026-11-27T07:00:00.000Z') },
    { kind: 'cron', cron: '*/15 9-17 * * MON-FRI', timezone: 'Asia/Tokyo' },
  ]);
});

test('each bad entry is an issue naming the entry and the field, all in one error', () => {
  let err: unknown;
  try {
    service.plan(
      [
        { schedule: 60, message: 'ok' },
        { schedule: '0 25 * * *', message: 'x' },
        { schedule: 60, message: 'x', overlap: 'skip' },
        { schedule: '2026-11-26T11:00:00Z', message: 'x' },
      ],
      now,
    );
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UnprocessableRequestError);
  const e = err as UnprocessableRequestError;
  expect((e.details as { path: string; code: string }[]).map((d) => `${d.path} ${d.code}`)).toEqual([
    'body.schedules[1].schedule invalid_cron',
    'body.schedules[2].overlap unexpected',
    'body.schedules[3].schedule past',
  ]);
  expect(e.message).toContain('the hour field "25"');
});
