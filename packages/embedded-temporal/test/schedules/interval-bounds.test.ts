// Intervals (epoch-aligned, with phase), start/end bounds, exclusions and unions.
import Long from 'long';
import { compileScheduleSpec, ScheduleSpecInput } from '../../src/schedules/spec';
import { CompiledCalendar } from '../../src/schedules/compiled-calendar';
import { dur, iso, ms, sequence, ts } from './helpers';

// A unit test, but one search examines its documented million candidates (about 3 s alone on two cores); more than the unit project's 10 s.
jest.setTimeout(60_000);

type Row = [label: string, spec: ScheduleSpecInput, from: string, expected: (string | undefined)[]];

const hourly = { interval: dur(3600) };
const allDay = { hour: '*', minute: '*', second: '*' };

const intervalRows: Row[] = [
  [
    'hourly, on the hour',
    { interval: [hourly] },
    '2024-01-01T10:20:00Z',
    ['2024-01-01T11:00:00.000Z', '2024-01-01T12:00:00.000Z'],
  ],
  [
    'hourly with 19m phase',
    { interval: [{ interval: dur(3600), phase: dur(19 * 60) }] },
    '2024-01-01T10:20:00Z',
    ['2024-01-01T11:19:00.000Z', '2024-01-01T12:19:00.000Z'],
  ],
  // The two examples from the IntervalSpec documentation.
  [
    '28 days counts from the epoch',
    { interval: [{ interval: dur(28 * 86_400) }] },
    '2022-02-16T00:00:00Z',
    ['2022-02-17T00:00:00.000Z', '2022-03-17T00:00:00.000Z'],
  ],
  [
    '28 days + 3d5h23m phase',
    { interval: [{ interval: dur(28 * 86_400), phase: dur(3 * 86_400 + 5 * 3600 + 23 * 60) }] },
    '2022-02-16T00:00:00Z',
    ['2022-02-20T05:23:00.000Z'],
  ],
  [
    'weekly intervals land on Thursdays (the epoch was one)',
    { interval: [{ interval: dur(7 * 86_400) }] },
    '2024-01-01T00:00:00Z',
    ['2024-01-04T00:00:00.000Z', '2024-01-11T00:00:00.000Z'],
  ],
  [
    'sub-second parts are truncated',
    { interval: [{ interval: dur(90, 500_000_000), phase: dur(10, 999_999_999) }] },
    '2024-01-01T00:00:00Z',
    ['2024-01-01T00:00:10.000Z', '2024-01-01T00:01:40.000Z'],
  ],
  [
    'seconds as Long',
    { interval: [{ interval: { seconds: Long.fromNumber(7200), nanos: 0 } }] },
    '2024-01-01T00:30:00Z',
    ['2024-01-01T02:00:00.000Z'],
  ],
  [
    'seconds as string',
    { interval: [{ interval: { seconds: '1800' } }] },
    '2024-01-01T00:10:00Z',
    ['2024-01-01T00:30:00.000Z'],
  ],
  [
    'two intervals are a union',
    { interval: [{ interval: dur(3600) }, { interval: dur(3600), phase: dur(1800) }] },
    '2024-01-01T00:00:00Z',
    ['2024-01-01T00:30:00.000Z', '2024-01-01T01:00:00.000Z', '2024-01-01T01:30:00.000Z'],
  ],
  [
    'calendar and interval together: earliest wins',
    { interval: [{ interval: dur(6 * 3600) }], calendar: [{ hour: '9', minute: '15' }] },
    '2024-01-01T05:00:00Z',
    ['2024-01-01T06:00:00.000Z', '2024-01-01T09:15:00.000Z', '2024-01-01T12:00:00.000Z'],
  ],
  [
    'a time matched by two specs fires once',
    { interval: [hourly], cronString: ['0 * * * *'] },
    '2024-01-01T00:00:00Z',
    ['2024-01-01T01:00:00.000Z', '2024-01-01T02:00:00.000Z'],
  ],
];

const boundRows: Row[] = [
  [
    'start time is inclusive',
    { interval: [hourly], startTime: ts('2024-01-01T10:00:00Z') },
    '2023-06-01T00:00:00Z',
    ['2024-01-01T10:00:00.000Z', '2024-01-01T11:00:00.000Z'],
  ],
  [
    'nothing before the start time',
    { interval: [hourly], startTime: ts('2024-01-01T10:30:00Z') },
    '2023-06-01T00:00:00Z',
    ['2024-01-01T11:00:00.000Z'],
  ],
  [
    'end time is inclusive, then nothing',
    { interval: [hourly], endTime: ts('2024-01-01T12:00:00Z') },
    '2024-01-01T10:30:00Z',
    ['2024-01-01T11:00:00.000Z', '2024-01-01T12:00:00.000Z', undefined],
  ],
  [
    'cron within bounds',
    { cronString: ['0 0 * * *'], startTime: ts('2024-01-10T00:00:00Z'), endTime: ts('2024-01-11T23:59:59Z') },
    '2024-01-01T00:00:00Z',
    ['2024-01-10T00:00:00.000Z', '2024-01-11T00:00:00.000Z', undefined],
  ],
  [
    'after the end time there is nothing',
    { interval: [hourly], endTime: ts('2024-01-01T00:00:00Z') },
    '2024-06-01T00:00:00Z',
    [undefined],
  ],
  [
    'intervals also stop after 2100',
    { interval: [{ interval: dur(365 * 86_400) }] },
    '2099-12-31T00:00:00Z',
    ['2100-11-30T00:00:00.000Z', undefined],
  ],
];

const exclusionRows: Row[] = [
  [
    'exclude whole weekend days',
    { cronString: ['0 12 * * *'], excludeCalendar: [{ dayOfWeek: 'SAT,SUN', ...allDay }] },
    '2024-01-05T13:00:00Z',
    ['2024-01-08T12:00:00.000Z'],
  ],
  // CalendarSpec defaults hour/minute/second to 0, so this only excludes weekend midnights.
  [
    'exclusion defaults are the CalendarSpec ones',
    { cronString: ['0 0,12 * * *'], excludeCalendar: [{ dayOfWeek: 'SAT' }] },
    '2024-01-05T13:00:00Z',
    ['2024-01-06T12:00:00.000Z', '2024-01-07T00:00:00.000Z'],
  ],
  [
    'structured exclusion of Christmas',
    {
      calendar: [{}],
      excludeStructuredCalendar: [
        {
          second: [{ start: 0 }],
          minute: [{ start: 0 }],
          hour: [{ start: 0 }],
          dayOfMonth: [{ start: 25 }],
          month: [{ start: 12 }],
          dayOfWeek: [{ start: 0, end: 6 }],
        },
      ],
    },
    '2024-12-24T00:00:00Z',
    ['2024-12-26T00:00:00.000Z'],
  ],
  [
    'exclusions are read in the spec time zone',
    { interval: [hourly], timezoneName: 'Europe/Berlin', excludeCalendar: [{ hour: '3', minute: '*' }] },
    '2024-01-01T00:30:00Z',
    ['2024-01-01T01:00:00.000Z', '2024-01-01T03:00:00.000Z'],
  ],
  [
    'excluded until past the end: nothing',
    { interval: [hourly], endTime: ts('2024-01-01T05:00:00Z'), excludeCalendar: [{ hour: '1-5', minute: '*' }] },
    '2024-01-01T00:30:00Z',
    [undefined],
  ],
  [
    'exclusions with impossible values never match (not validated, as on the server)',
    { interval: [hourly], excludeStructuredCalendar: [{ hour: [{ start: 99 }] }] },
    '2024-01-01T00:30:00Z',
    ['2024-01-01T01:00:00.000Z'],
  ],
];

describe('intervals', () => {
  test.each(intervalRows)('%s', (_l, spec, from, expected) =>
    expect(sequence(spec, from, expected.length)).toEqual(expected),
  );
});

describe('start and end time', () => {
  test.each(boundRows)('%s', (_l, spec, from, expected) =>
    expect(sequence(spec, from, expected.length)).toEqual(expected),
  );

  test('start time with nanos behaves like the server (one second of slack before it)', () => {
    const spec = compileScheduleSpec({
      interval: [{ interval: dur(1) }],
      startTime: { seconds: ms('2024-01-01T00:00:10Z') / 1000, nanos: 500_000_000 },
    });
    expect(iso(spec.nextNominal(0))).toBe('2024-01-01T00:00:10.000Z');
  });
});

describe('exclusions', () => {
  test.each(exclusionRows)('%s', (_l, spec, from, expected) =>
    expect(sequence(spec, from, expected.length)).toEqual(expected),
  );

  test('a spec that excludes everything gives up instead of hanging', () => {
    const spec = compileScheduleSpec({ interval: [{ interval: dur(1) }], excludeCalendar: [{ ...allDay }] });
    // Counts the candidates the search looks at: it stops after the documented one million
    // (spec.ts), a count rather than a time.
    const matches = CompiledCalendar.prototype.matches;
    let examined = 0;
    CompiledCalendar.prototype.matches = function (this: CompiledCalendar, epochSec: number) {
      examined++;
      return matches.call(this, epochSec);
    };
    try {
      expect(spec.nextNominal(ms('2024-01-01T00:00:00Z'))).toBeUndefined();
    } finally {
      CompiledCalendar.prototype.matches = matches;
    }
    expect(examined).toBeGreaterThan(0);
    expect(examined).toBeLessThanOrEqual(1_000_000);
  });
});
