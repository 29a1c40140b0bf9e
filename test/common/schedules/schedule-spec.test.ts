// Reading a run request's schedule entries (SPEC 2.5): seconds from now, an
// instant with its zone, a five-field cron string in an IANA time zone; each
// problem named by entry and field.
import { readSchedule } from '../../../src/common/schedules/schedule-spec';

const now = new Date('2026-11-26T12:00:00.000Z');
const read = (schedule: number | string, timezone?: string) =>
  readSchedule({ schedule, ...(timezone !== undefined && { timezone }) }, 'body.schedules[0]', now);

test('a number is one run that many seconds from now', () => {
  expect(read(90)).toEqual({ when: { kind: 'once', at: new Date('2026-11-26T12:01:30.000Z') } });
  expect(read(0.5)).toEqual({ when: { kind: 'once', at: new Date('2026-11-26T12:00:00.500Z') } });
});

test('an ISO 8601 date-time with a zone is one run at that instant; without a zone, or past, it is refused', () => {
  expect(read('2026-12-01T09:30:00+01:00')).toEqual({
    when: { kind: 'once', at: new Date('2026-12-01T08:30:00.000Z') },
  });
  expect(read('2026-12-01T09:30:00Z')).toEqual({ when: { kind: 'once', at: new Date('2026-12-01T09:30:00.000Z') } });
  expect(read('2026-12-01T09:30:00')).toEqual({
    issues: [expect.objectContaining({ path: 'body.schedules[0].schedule', code: 'no_time_zone' })],
  });
  expect(read('2026-11-26T11:59:59Z')).toEqual({ issues: [expect.objectContaining({ code: 'past' })] });
  expect(read('2026-13-01T09:30:00Z')).toEqual({ issues: [expect.objectContaining({ code: 'invalid_date' })] });
});

test('a five-field cron string recurs, in UTC unless a time zone is given', () => {
  expect(read('0 9 * * MON-FRI')).toEqual({ when: { kind: 'cron', cron: '0 9 * * MON-FRI', timezone: 'UTC' } });
  expect(read('*/15  8-18 1,15 jan-jun 0', 'Europe/Paris')).toEqual({
    when: { kind: 'cron', cron: '*/15 8-18 1,15 jan-jun 0', timezone: 'Europe/Paris' },
  });
});

test.each([
  ['0 25 * * *', 'the hour field "25"'],
  ['61 * * * *', 'the minute field "61"'],
  ['0 0 0 * *', 'the day of month field "0"'],
  ['0 0 * 13 *', 'the month field "13"'],
  ['0 0 * * FUNDAY', 'the day of week field "FUNDAY"'],
  ['*/0 * * * *', 'the minute field "*/0"'],
  ['5-1 * * * *', 'the minute field "5-1"'],
  ['0 9 * *', 'it has 4 fields'],
  ['every day', 'it has 2 fields'],
])('%s is refused: %s', (cron, says) => {
  const r = read(cron);
  expect(r).toEqual({
    issues: [expect.objectContaining({ path: 'body.schedules[0].schedule', code: 'invalid_cron' })],
  });
  expect((r as { issues: { message: string }[] }).issues[0].message).toContain(says);
});

test('a time zone must be an IANA name, and goes with a cron schedule only', () => {
  expect(read('0 9 * * *', 'Mars/Olympus')).toEqual({
    issues: [expect.objectContaining({ path: 'body.schedules[0].timezone', code: 'invalid_timezone' })],
  });
  expect(read(60, 'UTC')).toEqual({
    issues: [expect.objectContaining({ path: 'body.schedules[0].timezone', code: 'unexpected' })],
  });
});
