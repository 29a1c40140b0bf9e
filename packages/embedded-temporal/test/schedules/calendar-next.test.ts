// Next-fire times for cron strings and calendars in UTC: field syntax, names,
// steps, month ends, leap days, and Temporal's AND rule for day-of-month plus
// day-of-week. A brute-force oracle cross-checks a batch of expressions.
import { compileScheduleSpec } from '../../src/schedules/spec';
import { cron, iso, ms, sequence } from './helpers';

type Row = [label: string, cronString: string, from: string, expected: (string | undefined)[]];

const rows: Row[] = [
  ['every minute', '* * * * *', '2024-01-01T00:00:00Z', ['2024-01-01T00:01:00.000Z', '2024-01-01T00:02:00.000Z']],
  ['minute step', '*/15 * * * *', '2024-01-01T00:50:00Z', ['2024-01-01T01:00:00.000Z', '2024-01-01T01:15:00.000Z']],
  [
    'value/step runs to the max',
    '5/20 * * * *',
    '2024-01-01T00:00:00Z',
    ['2024-01-01T00:05:00.000Z', '2024-01-01T00:25:00.000Z', '2024-01-01T00:45:00.000Z', '2024-01-01T01:05:00.000Z'],
  ],
  [
    'list and range',
    '0,30 8-9 * * *',
    '2024-01-01T00:00:00Z',
    [
      '2024-01-01T08:00:00.000Z',
      '2024-01-01T08:30:00.000Z',
      '2024-01-01T09:00:00.000Z',
      '2024-01-01T09:30:00.000Z',
      '2024-01-02T08:00:00.000Z',
    ],
  ],
  [
    'range with step',
    '0 0-23/6 * * *',
    '2024-01-01T00:00:00Z',
    ['2024-01-01T06:00:00.000Z', '2024-01-01T12:00:00.000Z', '2024-01-01T18:00:00.000Z', '2024-01-02T00:00:00.000Z'],
  ],
  ['daily', '5 4 * * *', '2024-01-01T04:05:00Z', ['2024-01-02T04:05:00.000Z']],
  [
    'weekdays by name',
    '0 9 * * MON-FRI',
    '2024-01-05T10:00:00Z',
    ['2024-01-08T09:00:00.000Z', '2024-01-09T09:00:00.000Z'],
  ],
  [
    'lower-case and long names',
    '0 9 * * tues,Thursday',
    '2024-01-01T00:00:00Z',
    ['2024-01-02T09:00:00.000Z', '2024-01-04T09:00:00.000Z'],
  ],
  [
    'month names',
    '0 12 * JAN,JUL SUN',
    '2024-01-25T00:00:00Z',
    ['2024-01-28T12:00:00.000Z', '2024-07-07T12:00:00.000Z', '2024-07-14T12:00:00.000Z'],
  ],
  ['7 is Sunday', '0 0 * * 7', '2024-01-01T00:00:00Z', ['2024-01-07T00:00:00.000Z', '2024-01-14T00:00:00.000Z']],
  [
    'range ending at 7',
    '0 0 * * 5-7',
    '2024-01-01T00:00:00Z',
    ['2024-01-05T00:00:00.000Z', '2024-01-06T00:00:00.000Z', '2024-01-07T00:00:00.000Z', '2024-01-12T00:00:00.000Z'],
  ],
  [
    'dom AND dow: Friday the 13th',
    '0 0 13 * FRI',
    '2024-01-01T00:00:00Z',
    ['2024-09-13T00:00:00.000Z', '2024-12-13T00:00:00.000Z', '2025-06-13T00:00:00.000Z'],
  ],
  [
    'dom AND dow: first Monday',
    '0 0 1-7 * MON',
    '2024-01-01T00:00:00Z',
    ['2024-02-05T00:00:00.000Z', '2024-03-04T00:00:00.000Z', '2024-04-01T00:00:00.000Z'],
  ],
  ['? means any (dev-server extension)', '0 0 ? * MON', '2024-01-01T00:00:00Z', ['2024-01-08T00:00:00.000Z']],
  [
    'Feb 29 waits for leap years',
    '0 0 29 2 *',
    '2024-03-01T00:00:00Z',
    ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z'],
  ],
  ['2100 is not a leap year and the search stops there', '0 0 29 2 *', '2096-03-01T00:00:00Z', [undefined]],
  [
    '31st skips short months',
    '0 0 31 * *',
    '2024-01-31T00:00:00Z',
    ['2024-03-31T00:00:00.000Z', '2024-05-31T00:00:00.000Z', '2024-07-31T00:00:00.000Z', '2024-08-31T00:00:00.000Z'],
  ],
  [
    '30th skips February',
    '0 0 30 * *',
    '2024-01-30T00:00:00Z',
    ['2024-03-30T00:00:00.000Z', '2024-04-30T00:00:00.000Z'],
  ],
  ['Feb 30 never happens', '0 0 30 2 *', '2024-01-01T00:00:00Z', [undefined]],
  ['year end rollover', '59 23 31 12 *', '2024-12-31T23:59:00Z', ['2025-12-31T23:59:00.000Z']],
  ['6 fields: year', '0 12 1 1 * 2030', '2024-01-01T00:00:00Z', ['2030-01-01T12:00:00.000Z', undefined]],
  [
    '6 fields: year step',
    '0 0 1 1 * 2024/4',
    '2024-06-01T00:00:00Z',
    ['2028-01-01T00:00:00.000Z', '2032-01-01T00:00:00.000Z'],
  ],
  [
    '7 fields: seconds',
    '30 0 12 * * * *',
    '2024-01-01T00:00:00Z',
    ['2024-01-01T12:00:30.000Z', '2024-01-02T12:00:30.000Z'],
  ],
  [
    '7 fields: every 10 seconds',
    '*/10 * * * * * *',
    '2024-01-01T00:00:55Z',
    ['2024-01-01T00:01:00.000Z', '2024-01-01T00:01:10.000Z'],
  ],
  ['@hourly', '@hourly', '2024-01-01T00:00:00Z', ['2024-01-01T01:00:00.000Z', '2024-01-01T02:00:00.000Z']],
  ['@daily', '@daily', '2024-01-01T00:00:00Z', ['2024-01-02T00:00:00.000Z']],
  ['@midnight', '@midnight', '2024-01-01T12:00:00Z', ['2024-01-02T00:00:00.000Z']],
  [
    '@weekly is Sunday midnight',
    '@weekly',
    '2024-01-01T00:00:00Z',
    ['2024-01-07T00:00:00.000Z', '2024-01-14T00:00:00.000Z'],
  ],
  ['@monthly', '@monthly', '2024-01-15T00:00:00Z', ['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']],
  ['@yearly', '@yearly', '2024-01-15T00:00:00Z', ['2025-01-01T00:00:00.000Z']],
  ['@annually', '@annually', '2024-01-15T00:00:00Z', ['2025-01-01T00:00:00.000Z']],
  ['trailing comment', '0 6 * * * # morning report', '2024-01-01T00:00:00Z', ['2024-01-01T06:00:00.000Z']],
  ['TZ= prefix', 'TZ=Asia/Tokyo 0 9 * * *', '2024-01-01T00:00:00Z', ['2024-01-02T00:00:00.000Z']],
  ['CRON_TZ= prefix', 'CRON_TZ=Asia/Kolkata 30 9 * * *', '2024-01-01T00:00:00Z', ['2024-01-01T04:00:00.000Z']],
  [
    '@every as interval',
    '@every 90m',
    '2024-01-01T00:00:00Z',
    ['2024-01-01T01:30:00.000Z', '2024-01-01T03:00:00.000Z'],
  ],
  [
    '@every with phase and days',
    '@every 1d/6h',
    '2024-01-01T00:00:00Z',
    ['2024-01-01T06:00:00.000Z', '2024-01-02T06:00:00.000Z'],
  ],
];

describe('cron strings (UTC)', () => {
  test.each(rows)('%s: %s', (_label, cronString, from, expected) => {
    expect(sequence(cron(cronString), from, expected.length)).toEqual(expected);
  });

  test('strictly after: a time that matches exactly is not returned again', () => {
    const spec = compileScheduleSpec(cron('0 12 * * *'));
    expect(iso(spec.nextNominal(ms('2024-01-01T12:00:00Z')))).toBe('2024-01-02T12:00:00.000Z');
    expect(iso(spec.nextNominal(ms('2024-01-01T11:59:59.999Z')))).toBe('2024-01-01T12:00:00.000Z');
  });

  test('sub-second inputs use whole seconds, like the server', () => {
    const spec = compileScheduleSpec(cron('* * * * * * *'));
    expect(iso(spec.nextNominal(ms('2024-01-01T00:00:00.500Z')))).toBe('2024-01-01T00:00:01.000Z');
  });

  test('several cron strings are a union', () => {
    expect(sequence(cron('0 9 * * *', '0 17 * * *'), '2024-01-01T10:00:00Z', 3)).toEqual([
      '2024-01-01T17:00:00.000Z',
      '2024-01-02T09:00:00.000Z',
      '2024-01-02T17:00:00.000Z',
    ]);
  });
});

describe('calendar (string CalendarSpec) and structured calendar', () => {
  test('CalendarSpec defaults: second/minute/hour 0, everything else every', () => {
    expect(sequence({ calendar: [{ dayOfWeek: 'WED' }] }, '2024-01-01T00:00:00Z', 2)).toEqual([
      '2024-01-03T00:00:00.000Z',
      '2024-01-10T00:00:00.000Z',
    ]);
  });

  test('structured calendar with explicit ranges', () => {
    const every = (start: number, end: number) => [{ start, end, step: 1 }];
    const spec = {
      structuredCalendar: [
        {
          second: [{ start: 0 }],
          minute: [{ start: 0, end: 59, step: 20 }],
          hour: [{ start: 9 }, { start: 17 }],
          dayOfMonth: every(1, 31),
          month: every(1, 12),
          dayOfWeek: every(1, 5),
          year: [],
        },
      ],
    };
    expect(sequence(spec, '2024-01-05T16:30:00Z', 4)).toEqual([
      '2024-01-05T17:00:00.000Z',
      '2024-01-05T17:20:00.000Z',
      '2024-01-05T17:40:00.000Z',
      '2024-01-08T09:00:00.000Z',
    ]);
  });

  test('structured calendar fields left empty match nothing (year excepted), as on the server', () => {
    expect(sequence({ structuredCalendar: [{ hour: [{ start: 9 }] }] }, '2024-01-01T00:00:00Z', 1)).toEqual([
      undefined,
    ]);
  });

  test('empty spec has no times', () => {
    expect(compileScheduleSpec({}).nextNominal(ms('2024-01-01T00:00:00Z'))).toBeUndefined();
  });
});

/** Oracle: scan minute by minute with plain Date arithmetic (UTC only, second field 0). */
function bruteForceNext(fields: string, after: number): number | undefined {
  const [mi, h, dom, mon, dow] = fields.split(' ').map((f) => expand(f));
  for (let t = Math.floor(after / 60_000) * 60_000 + 60_000; t < after + 400 * 86_400_000; t += 60_000) {
    const d = new Date(t);
    if (
      mi.has(d.getUTCMinutes()) &&
      h.has(d.getUTCHours()) &&
      dom.has(d.getUTCDate()) &&
      mon.has(d.getUTCMonth() + 1) &&
      dow.has(d.getUTCDay())
    ) {
      return t;
    }
  }
  return undefined;
}

/** Minimal numeric-only cron field expansion for the oracle: *, a, a-b, /s, lists. */
function expand(field: string): Set<number> {
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText ? Number(stepText) : 1;
    const [lo, hi] =
      range === '*'
        ? [0, 59]
        : range.includes('-')
          ? range.split('-').map(Number)
          : [Number(range), stepText ? 59 : Number(range)];
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

describe('cross-check against a brute-force scan', () => {
  const exprs = [
    '*/7 * * * *',
    '13 */5 * * *',
    '0 0 1,15 * *',
    '30 23 * * 0',
    '0 12 1-7 * 2',
    '45 6 29-31 * *',
    '0 0 * 2 1-5',
    '10 10 10 * *',
  ];
  const starts = ['2023-12-31T23:59:00Z', '2024-02-27T10:11:12Z', '2024-06-30T23:30:00Z'];
  test.each(exprs)('%s', (expr) => {
    const spec = compileScheduleSpec(cron(expr));
    for (const start of starts) {
      let t = ms(start);
      for (let i = 0; i < 5; i++) {
        const expected = bruteForceNext(expr, t);
        const actual = spec.nextNominal(t);
        expect(iso(actual)).toBe(iso(expected));
        if (actual === undefined) break;
        t = actual;
      }
    }
  });
});
