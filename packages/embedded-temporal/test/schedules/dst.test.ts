// Daylight saving transitions, in both directions, west of UTC (America/New_York)
// and east of it (Europe/Berlin). The expected times follow the real server's
// algorithm on Go's time.Date, whose resolution of repeated wall times differs
// by hemisphere of offset; see src/schedules/compiled-calendar.ts.
import { compileScheduleSpec } from '../../src/schedules/spec';
import { cron, iso, ms, sequence } from './helpers';

type Row = [label: string, cronString: string, from: string, expected: (string | undefined)[]];

const NY = 'CRON_TZ=America/New_York';
const BERLIN = 'CRON_TZ=Europe/Berlin';

const rows: Row[] = [
  // New York springs forward 2024-03-10 02:00 EST -> 03:00 EDT (07:00Z).
  [
    'NY spring: daily 02:30 is skipped on the gap day',
    `${NY} 30 2 * * *`,
    '2024-03-09T00:00:00Z',
    ['2024-03-09T07:30:00.000Z', '2024-03-11T06:30:00.000Z'],
  ],
  [
    'NY spring: half-hourly 1-3h jumps the gap',
    `${NY} */30 1-3 * * *`,
    '2024-03-10T05:59:00Z',
    [
      '2024-03-10T06:00:00.000Z',
      '2024-03-10T06:30:00.000Z',
      '2024-03-10T07:00:00.000Z',
      '2024-03-10T07:30:00.000Z',
      '2024-03-11T05:00:00.000Z',
    ],
  ],
  // New York falls back 2024-11-03 02:00 EDT -> 01:00 EST (06:00Z): 01:xx happens twice.
  [
    'NY fall: daily 01:30 fires at both 01:30s',
    `${NY} 30 1 * * *`,
    '2024-11-03T00:00:00Z',
    ['2024-11-03T05:30:00.000Z', '2024-11-03T06:30:00.000Z', '2024-11-04T06:30:00.000Z'],
  ],
  [
    'NY fall: half-hourly runs the repeated hour twice',
    `${NY} */30 1-2 * * *`,
    '2024-11-03T04:59:00Z',
    [
      '2024-11-03T05:00:00.000Z',
      '2024-11-03T05:30:00.000Z',
      '2024-11-03T06:00:00.000Z',
      '2024-11-03T06:30:00.000Z',
      '2024-11-03T07:00:00.000Z',
      '2024-11-03T07:30:00.000Z',
      '2024-11-04T06:00:00.000Z',
    ],
  ],
  [
    'NY fall: hourly keeps one-hour spacing',
    `${NY} 0 * * * *`,
    '2024-11-03T04:30:00Z',
    ['2024-11-03T05:00:00.000Z', '2024-11-03T06:00:00.000Z', '2024-11-03T07:00:00.000Z', '2024-11-03T08:00:00.000Z'],
  ],
  // Berlin springs forward 2024-03-31 02:00 CET -> 03:00 CEST (01:00Z).
  [
    'Berlin spring: daily 02:30 is skipped on the gap day',
    `${BERLIN} 30 2 * * *`,
    '2024-03-30T00:00:00Z',
    ['2024-03-30T01:30:00.000Z', '2024-04-01T00:30:00.000Z'],
  ],
  [
    'Berlin spring: half-hourly 1-3h jumps the gap',
    `${BERLIN} */30 1-3 * * *`,
    '2024-03-30T23:59:00Z',
    [
      '2024-03-31T00:00:00.000Z',
      '2024-03-31T00:30:00.000Z',
      '2024-03-31T01:00:00.000Z',
      '2024-03-31T01:30:00.000Z',
      '2024-03-31T23:00:00.000Z',
    ],
  ],
  // Berlin falls back 2024-10-27 03:00 CEST -> 02:00 CET (01:00Z): 02:xx happens twice.
  // Go resolves a repeated wall time east of UTC to its second occurrence, so the
  // server fires a daily 02:30 once, at the later one...
  [
    'Berlin fall: daily 02:30 fires once, at the second 02:30',
    `${BERLIN} 30 2 * * *`,
    '2024-10-26T00:00:00Z',
    ['2024-10-26T00:30:00.000Z', '2024-10-27T01:30:00.000Z', '2024-10-28T01:30:00.000Z'],
  ],
  // ...and its repeated-hour handling adds an hour on top, skipping slots.
  [
    'Berlin fall: quarter-hourly skips slots around the repeat',
    `${BERLIN} */15 1-3 * * *`,
    '2024-10-26T23:44:00Z',
    [
      '2024-10-26T23:45:00.000Z',
      '2024-10-27T00:00:00.000Z',
      '2024-10-27T01:15:00.000Z',
      '2024-10-27T02:30:00.000Z',
      '2024-10-27T02:45:00.000Z',
      '2024-10-28T00:00:00.000Z',
    ],
  ],
  [
    'Berlin fall: hourly has one two-hour gap',
    `${BERLIN} 0 * * * *`,
    '2024-10-26T23:30:00Z',
    ['2024-10-27T00:00:00.000Z', '2024-10-27T02:00:00.000Z', '2024-10-27T03:00:00.000Z'],
  ],
  // Upstream expectations (Temporal's own calendar tests) for US/Pacific.
  [
    'Pacific spring: 02:33:33 skipped',
    'CRON_TZ=US/Pacific 33 33 2 * * * *',
    '2022-03-12T04:00:00Z',
    ['2022-03-12T10:33:33.000Z', '2022-03-14T09:33:33.000Z'],
  ],
  [
    'Pacific fall: 01:33:33 and 01:44:33 twice',
    'CRON_TZ=US/Pacific 33 33,44 1 * * * *',
    '2021-11-07T07:15:15Z',
    [
      '2021-11-07T08:33:33.000Z',
      '2021-11-07T08:44:33.000Z',
      '2021-11-07T09:33:33.000Z',
      '2021-11-07T09:44:33.000Z',
      '2021-11-08T09:33:33.000Z',
    ],
  ],
];

describe('DST transitions', () => {
  test.each(rows)('%s', (_label, cronString, from, expected) => {
    expect(sequence(cron(cronString), from, expected.length)).toEqual(expected);
  });

  test('timezoneName applies to calendars but not to intervals', () => {
    const spec = {
      timezoneName: 'America/New_York',
      calendar: [{ hour: '9' }],
      interval: [{ interval: { seconds: 86_400 } }],
    };
    expect(sequence(spec, '2024-07-01T00:30:00Z', 3)).toEqual([
      '2024-07-01T13:00:00.000Z', // 09:00 EDT
      '2024-07-02T00:00:00.000Z', // interval: UTC midnight, whatever the zone
      '2024-07-02T13:00:00.000Z',
    ]);
  });

  test('London: a search starting inside the repeated hour (upstream case)', () => {
    const spec = compileScheduleSpec({
      timezoneName: 'Europe/London',
      calendar: [{ second: '0', minute: '1', hour: '0', dayOfMonth: '2', month: 'Jan', dayOfWeek: 'Sun' }],
    });
    // 2005-01-02 00:01 GMT is the first Sunday 2 January after these points.
    expect(iso(spec.nextNominal(ms('2004-01-01T00:00:05Z')))).toBe('2005-01-02T00:01:00.000Z');
    expect(iso(spec.nextNominal(ms('2004-10-31T01:07:03Z')))).toBe('2005-01-02T00:01:00.000Z');
  });

  // West of UTC the search is consistent: any start between two results leads to the later one.
  test.each([
    ['NY fall', `${NY} */30 1-2 * * *`, '2024-11-03T04:59:00Z'],
    ['NY spring', `${NY} */30 1-3 * * *`, '2024-03-10T05:59:00Z'],
  ])('%s: every start between two results finds the next one', (_label, cronString, from) => {
    const spec = compileScheduleSpec(cron(cronString));
    let start = ms(from);
    for (let i = 0; i < 6; i++) {
      const next = spec.nextNominal(start)!;
      for (let t = start; t < next; t += 7_000) expect(spec.nextNominal(t)).toBe(next);
      start = next;
    }
  });
});
