// Workflow cron schedules follow robfig/cron v3's standard parser, as the real server does.
import { CronParseError, cronBackoffMs, cronNext, parseCron, validateCron } from '../../src/engine/cron-schedule';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function next(cron: string, after: string): string | undefined {
  return iso(cronNext(parseCron(cron), at(after)));
}

function nextN(cron: string, after: string, n: number): string[] {
  const s = parseCron(cron);
  const out: string[] = [];
  let t = at(after);
  for (let i = 0; i < n; i++) {
    const v = cronNext(s, t)!;
    out.push(iso(v)!);
    t = v;
  }
  return out;
}

describe('parsing', () => {
  test.each([
    ['* * * * *'],
    ['*/15 0-6 1,15 * MON-FRI'],
    ['0 12 ? JAN,jul sun'],
    ['CRON_TZ=America/New_York 0 9 * * *'],
    ['TZ=Europe/Berlin 30 6 * * 1'],
    ['@hourly'],
    ['@daily'],
    ['@every 90s'],
  ])('accepts %s', (cron) => {
    expect(() => parseCron(cron)).not.toThrow();
  });

  test.each([
    ['', 'empty'],
    ['* * * *', 'four fields'],
    ['0 * * * * *', 'six fields (no seconds in the standard parser)'],
    ['0 0 * * 7', 'day-of-week 7'],
    ['60 * * * *', 'minute out of range'],
    ['0 0 0 * *', 'day-of-month 0'],
    ['0 0 L * *', 'L'],
    ['5-1 * * * *', 'reversed range'],
    ['*/0 * * * *', 'zero step'],
    ['1-2-3 * * * *', 'two hyphens'],
    ['@fortnightly', 'unknown descriptor'],
    ['@every soon', 'bad duration'],
    ['CRON_TZ=Mars/Olympus 0 0 * * *', 'unknown zone'],
  ])('refuses %s (%s)', (cron) => {
    expect(() => parseCron(cron)).toThrow(CronParseError);
  });

  test('validateCron answers INVALID_ARGUMENT, also for a schedule that never fires', () => {
    expect(() => validateCron('not a cron', Date.now())).toThrow(/invalid CronSchedule/);
    // February 30th: parses, but no time satisfies it.
    expect(() => validateCron('0 0 30 2 *', Date.now())).toThrow(/no time can be found/);
    expect(() => validateCron('0 0 29 2 *', Date.now())).not.toThrow();
  });
});

describe('next times (UTC)', () => {
  test('every minute, strictly after the given time', () => {
    expect(next('* * * * *', '2024-01-01T00:00:30.500Z')).toBe('2024-01-01T00:01:00.000Z');
    expect(next('* * * * *', '2024-01-01T00:01:00.000Z')).toBe('2024-01-01T00:02:00.000Z');
  });

  test('steps and ranges', () => {
    expect(nextN('*/15 * * * *', '2024-01-01T00:07:00Z', 3)).toEqual([
      '2024-01-01T00:15:00.000Z',
      '2024-01-01T00:30:00.000Z',
      '2024-01-01T00:45:00.000Z',
    ]);
    // "N/step" means N..max/step.
    expect(nextN('5/20 * * * *', '2024-01-01T00:00:00Z', 4)).toEqual([
      '2024-01-01T00:05:00.000Z',
      '2024-01-01T00:25:00.000Z',
      '2024-01-01T00:45:00.000Z',
      '2024-01-01T01:05:00.000Z',
    ]);
    expect(next('0 9-17/4 * * *', '2024-01-01T10:00:00Z')).toBe('2024-01-01T13:00:00.000Z');
  });

  test('day-of-month and day-of-week are OR-ed when both are restricted', () => {
    // 2024-01-01 is a Monday; Jan 5/12/19 are Fridays, Jan 13 a Saturday.
    expect(nextN('0 0 13 * FRI', '2024-01-01T00:00:00Z', 4)).toEqual([
      '2024-01-05T00:00:00.000Z',
      '2024-01-12T00:00:00.000Z',
      '2024-01-13T00:00:00.000Z',
      '2024-01-19T00:00:00.000Z',
    ]);
  });

  test('... and AND-ed when either is a star', () => {
    expect(next('0 0 13 * *', '2024-01-01T00:00:00Z')).toBe('2024-01-13T00:00:00.000Z');
    expect(next('0 0 * * FRI', '2024-01-01T00:00:00Z')).toBe('2024-01-05T00:00:00.000Z');
    // "?" counts as a star too; a stepped star does not.
    expect(next('0 0 13 * ?', '2024-01-01T00:00:00Z')).toBe('2024-01-13T00:00:00.000Z');
    expect(nextN('0 0 */10 * MON', '2024-01-01T00:00:00Z', 3)).toEqual([
      '2024-01-08T00:00:00.000Z',
      '2024-01-11T00:00:00.000Z',
      '2024-01-15T00:00:00.000Z',
    ]);
  });

  test('months and leap days', () => {
    expect(next('0 0 29 2 *', '2024-03-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    expect(next('30 6 1 jan,JUL *', '2024-02-01T00:00:00Z')).toBe('2024-07-01T06:30:00.000Z');
    expect(next('0 0 31 * *', '2024-04-01T00:00:00Z')).toBe('2024-05-31T00:00:00.000Z');
  });

  test('descriptors', () => {
    expect(next('@hourly', '2024-01-01T10:20:00Z')).toBe('2024-01-01T11:00:00.000Z');
    expect(next('@daily', '2024-01-01T10:20:00Z')).toBe('2024-01-02T00:00:00.000Z');
    expect(next('@weekly', '2024-01-01T10:20:00Z')).toBe('2024-01-07T00:00:00.000Z');
    expect(next('@monthly', '2024-01-15T00:00:00Z')).toBe('2024-02-01T00:00:00.000Z');
    expect(next('@yearly', '2024-01-15T00:00:00Z')).toBe('2025-01-01T00:00:00.000Z');
  });

  test('@every counts from the given time, in whole seconds, at least one', () => {
    expect(next('@every 90s', '2024-01-01T00:00:10.700Z')).toBe('2024-01-01T00:01:40.000Z');
    expect(next('@every 1h30m', '2024-01-01T00:00:00Z')).toBe('2024-01-01T01:30:00.000Z');
    expect(next('@every 200ms', '2024-01-01T00:00:00.300Z')).toBe('2024-01-01T00:00:01.000Z');
  });

  test('the search gives up five years ahead', () => {
    expect(cronNext(parseCron('0 0 30 2 *'), at('2024-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('time zones', () => {
  test('wall-clock times in the given zone, across a DST change', () => {
    // New York switches to EDT (UTC-4) at 2024-03-10 02:00 local.
    expect(nextN('CRON_TZ=America/New_York 0 9 * * *', '2024-03-09T00:00:00Z', 2)).toEqual([
      '2024-03-09T14:00:00.000Z',
      '2024-03-10T13:00:00.000Z',
    ]);
  });

  test('a wall time that does not exist on the day of the change is skipped', () => {
    expect(next('CRON_TZ=America/New_York 30 2 * * *', '2024-03-10T05:00:00Z')).toBe('2024-03-11T06:30:00.000Z');
  });
});

describe('backoff before the next run (from the run scheduled time to now)', () => {
  const cron = '* * * * *';
  test('the first run waits for the first schedule time, rounded up to whole seconds', () => {
    const now = at('2024-01-01T00:00:30.500Z');
    expect(cronBackoffMs(cron, now, now)).toBe(30_000);
  });

  test('the next schedule time after the run was scheduled, if it is still ahead', () => {
    expect(cronBackoffMs(cron, at('2024-01-01T00:01:00.400Z'), at('2024-01-01T00:01:01.200Z'))).toBe(59_000);
  });

  test('schedule times missed while the run was running are skipped', () => {
    expect(cronBackoffMs(cron, at('2024-01-01T00:01:00Z'), at('2024-01-01T00:03:30Z'))).toBe(30_000);
  });

  test('a schedule time exactly now means no wait', () => {
    expect(cronBackoffMs(cron, at('2024-01-01T00:01:00Z'), at('2024-01-01T00:02:00Z'))).toBe(0);
  });

  test('a run that closed before it was scheduled waits for its own scheduled time', () => {
    expect(cronBackoffMs(cron, at('2024-01-01T00:02:00Z'), at('2024-01-01T00:01:10.250Z'))).toBe(50_000);
  });

  test('no next time, no backoff', () => {
    expect(cronBackoffMs('0 0 30 2 *', at('2024-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'))).toBeUndefined();
    expect(cronBackoffMs('garbage', 0, 0)).toBeUndefined();
  });
});
