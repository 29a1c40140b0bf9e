// What DescribeSchedule shows for a spec: cron strings and CalendarSpecs compiled
// into StructuredCalendarSpec (with Describe's filled-in range defaults), @every
// into IntervalSpec, CRON_TZ into timezone_name. Plus round trips through the
// wire format and the TypeScript SDK's own encoder/decoder.
import { decodeScheduleSpec, encodeScheduleSpec } from '@temporalio/client/lib/schedule-helpers';
import { decode, encode } from '../../src/proto';
import { canonicalizeScheduleSpec, compileScheduleSpec, ScheduleSpecInput } from '../../src/schedules/spec';
import { dur, sequence, ts } from './helpers';

const r = (start: number, end = start, step = 1) => ({ start, end, step });
const SPEC_TYPE = 'temporal.api.schedule.v1.ScheduleSpec';

/** The structured calendar Describe shows for a CalendarSpec with only these fields set. */
function structured(overrides: Record<string, unknown>) {
  return {
    second: [r(0)],
    minute: [r(0)],
    hour: [r(0)],
    dayOfMonth: [r(1, 31)],
    month: [r(1, 12)],
    year: [],
    dayOfWeek: [r(0, 6)],
    comment: '',
    ...overrides,
  };
}

describe('canonicalizeScheduleSpec', () => {
  test.each<[string, string, Record<string, unknown>]>([
    [
      'weekdays at noon with comment',
      '0 12 * * MON-FRI # lunch',
      { hour: [r(12)], dayOfWeek: [r(1, 5)], comment: 'lunch' },
    ],
    ['lists and steps', '0,30 */6 1,15 * *', { minute: [r(0), r(30)], hour: [r(0, 23, 6)], dayOfMonth: [r(1), r(15)] }],
    ['7 becomes 0', '0 0 * * 7', { dayOfWeek: [r(0)] }],
    ['a range through 7 gains a 0', '0 0 * * 5-7', { dayOfWeek: [r(0), r(5, 6)] }],
    ['0-7 is simply every day', '0 0 * * 0-7', { dayOfWeek: [r(0, 6)] }],
    ['stepped range reaching 7', '0 0 * * 1-7/2', { dayOfWeek: [r(0), r(1, 6, 2)] }],
    ['stepped range missing 7', '0 0 * * 3-7/3', { dayOfWeek: [r(3, 6, 3)] }],
    ['month names', '0 0 1 jan,Jul,DECEMBER *', { dayOfMonth: [r(1)], month: [r(1), r(7), r(12)] }],
    ['year field', '0 0 1 1 * 2025-2030/5', { dayOfMonth: [r(1)], month: [r(1)], year: [r(2025, 2030, 5)] }],
    ['seconds field', '*/10 0 0 * * * *', { second: [r(0, 59, 10)] }],
    ['@monthly', '@monthly', { dayOfMonth: [r(1)] }],
    ['? is every', '0 0 ? * ?', {}],
  ])('cron %s', (_label, cronString, overrides) => {
    const described = canonicalizeScheduleSpec({ cronString: [cronString] });
    expect(described.structuredCalendar).toEqual([structured(overrides)]);
    expect(described.cronString).toEqual([]);
    expect(described.calendar).toEqual([]);
  });

  test('CRON_TZ moves into timezoneName; @every becomes an interval', () => {
    expect(canonicalizeScheduleSpec({ cronString: ['CRON_TZ=Europe/Berlin 0 9 * * *'] }).timezoneName).toBe(
      'Europe/Berlin',
    );
    const described = canonicalizeScheduleSpec({ cronString: ['@every 90m/15m', '@every 2d'] });
    expect(described.interval).toEqual([
      { interval: { seconds: 5400, nanos: 0 }, phase: { seconds: 900, nanos: 0 } },
      { interval: { seconds: 172_800, nanos: 0 } },
    ]);
    expect(described.structuredCalendar).toEqual([]);
  });

  test('calendar, excludeCalendar and structured input are all shown structured, ranges filled in', () => {
    const described = canonicalizeScheduleSpec({
      structuredCalendar: [{ hour: [{ start: 9 }], minute: [{ start: 0, end: 59, step: 15 }], comment: 'raw' }],
      calendar: [{ hour: '17', dayOfWeek: 'sat,sun' }],
      excludeCalendar: [{ month: 'dec', dayOfMonth: '25' }],
      excludeStructuredCalendar: [{ year: [{ start: 2030 }] }],
      interval: [{ interval: dur(3600), phase: dur(60) }],
      startTime: ts('2024-01-01T00:00:00Z'),
      endTime: ts('2025-01-01T00:00:00Z'),
      jitter: dur(30),
      timezoneName: 'America/New_York',
    });
    expect(described).toEqual({
      structuredCalendar: [
        {
          second: [],
          minute: [r(0, 59, 15)],
          hour: [r(9)],
          dayOfMonth: [],
          month: [],
          year: [],
          dayOfWeek: [],
          comment: 'raw',
        },
        structured({ hour: [r(17)], dayOfWeek: [r(6), r(0)] }), // in the order written
      ],
      cronString: [],
      calendar: [],
      interval: [{ interval: dur(3600), phase: dur(60) }],
      excludeCalendar: [],
      excludeStructuredCalendar: [
        { second: [], minute: [], hour: [], dayOfMonth: [], month: [], year: [r(2030)], dayOfWeek: [], comment: '' },
        structured({ dayOfMonth: [r(25)], month: [r(12)] }),
      ],
      startTime: ts('2024-01-01T00:00:00Z'),
      endTime: ts('2025-01-01T00:00:00Z'),
      jitter: dur(30),
      timezoneName: 'America/New_York',
    });
  });

  test('does not mutate its input', () => {
    const input = { cronString: ['0 9 * * *'], structuredCalendar: [{ hour: [{ start: 3 }] }] };
    const before = JSON.stringify(input);
    canonicalizeScheduleSpec(input);
    compileScheduleSpec(input);
    expect(JSON.stringify(input)).toBe(before);
  });

  test('is idempotent', () => {
    const once = canonicalizeScheduleSpec({
      cronString: ['CRON_TZ=Asia/Tokyo 0 9 1-7 * MON', 'CRON_TZ=Asia/Tokyo 30 18 * * *'],
      calendar: [{ dayOfWeek: '5-7' }],
      interval: [{ interval: dur(5400) }],
    });
    expect(canonicalizeScheduleSpec(once)).toEqual(once);
  });
});

describe('round trips', () => {
  const specs: [string, ScheduleSpecInput][] = [
    ['cron with zone', { cronString: ['CRON_TZ=America/New_York */30 1-2 * * *'] }],
    [
      'calendar + exclusion',
      {
        calendar: [{ hour: '9-17', minute: '*/20', dayOfWeek: 'mon-fri' }],
        excludeCalendar: [{ hour: '12', minute: '*' }],
      },
    ],
    [
      '@every + bounds',
      { cronString: ['@every 45m/5m'], startTime: ts('2024-03-09T12:00:00Z'), endTime: ts('2024-03-12T00:00:00Z') },
    ],
    ['Sunday as 7', { cronString: ['0 6 * * 1-7/3'], timezoneName: 'Europe/Berlin' }],
  ];
  const from = '2024-03-09T00:00:00Z';

  test.each(specs)('%s: the described spec schedules the same times', (_label, spec) => {
    const expected = sequence(spec, from, 40);
    expect(sequence(canonicalizeScheduleSpec(spec), from, 40)).toEqual(expected);
  });

  test.each(specs)('%s: the described spec survives protobuf encode/decode', (_label, spec) => {
    const expected = sequence(spec, from, 40);
    const wire = decode(SPEC_TYPE, encode(SPEC_TYPE, canonicalizeScheduleSpec(spec)));
    expect(sequence(wire, from, 40)).toEqual(expected);
  });

  test('the TypeScript SDK decodes the described spec as it would a real server reply', () => {
    const described = canonicalizeScheduleSpec({
      cronString: ['CRON_TZ=Europe/Berlin 0 12 * * MON-FRI # lunch'],
      jitter: dur(30),
    });
    const sdk = decodeScheduleSpec(decode(SPEC_TYPE, encode(SPEC_TYPE, described)));
    expect(sdk.timezone).toBe('Europe/Berlin');
    expect(sdk.jitter).toBe(30_000);
    expect(sdk.calendars).toEqual([
      expect.objectContaining({
        hour: [r(12)],
        dayOfWeek: [{ start: 'MONDAY', end: 'FRIDAY', step: 1 }],
        comment: 'lunch',
      }),
    ]);
  });

  test('specs encoded by the TypeScript SDK compile to what the user asked for', () => {
    const encoded = encodeScheduleSpec({
      calendars: [{ hour: 9, dayOfWeek: 'MONDAY' }],
      intervals: [{ every: '6h', offset: '1h' }],
      skip: [{ hour: 7, minute: '*', second: '*' }],
      startAt: new Date('2024-01-01T00:00:00Z'),
      timezone: 'UTC',
    });
    const wire = decode(SPEC_TYPE, encode(SPEC_TYPE, encoded));
    expect(sequence(wire, '2024-01-01T00:00:00Z', 5)).toEqual([
      '2024-01-01T01:00:00.000Z',
      '2024-01-01T09:00:00.000Z', // Monday 09:00 (07:00 interval slot is skipped)
      '2024-01-01T13:00:00.000Z',
      '2024-01-01T19:00:00.000Z',
      '2024-01-02T01:00:00.000Z',
    ]);
  });
});
