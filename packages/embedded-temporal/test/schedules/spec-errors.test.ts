// Specs the real server refuses are refused here too, with a recognisable reason.
import {
  canonicalizeScheduleSpec,
  compileScheduleSpec,
  ScheduleSpecError,
  ScheduleSpecInput,
} from '../../src/schedules/spec';
import { dur } from './helpers';

const cronErrors: [string, string][] = [
  ['* * * *', 'CronString does not have 5-7 fields'],
  ['* * * * * * * *', 'CronString does not have 5-7 fields'],
  ['@reboot', 'CronString does not have 5-7 fields'],
  ['60 * * * *', 'Minute is not in range [0-59]'],
  ['* 24 * * *', 'Hour is not in range [0-23]'],
  ['0 0 0 * *', 'DayOfMonth is not in range [1-31]'],
  ['0 0 32 * *', 'DayOfMonth is not in range [1-31]'],
  ['0 0 * 13 *', 'Month is not in range [1-12]'],
  ['0 0 * * 8', 'DayOfWeek is not in range [0-7]'],
  ['0 0 * * mon-sun', 'DayOfWeek End is before Start'],
  ['0 0 * * 1999', 'DayOfWeek is not in range'],
  ['0 0 1 1 * 1999', 'Year is not in range [2000-2100]'],
  ['0 0 L * *', 'DayOfMonth is not in range'],
  ['*/0 * * * *', 'Minute has invalid Step'],
  ['5/ * * * *', 'Minute missing step value'],
  ['1/2/3 * * * *', 'Minute has too many slashes'],
  ['1-2-3 * * * *', 'Minute has too many dashes'],
  ['30-10 * * * *', 'Minute End is before Start'],
  ['0 0 * ja *', 'Month is not in range'], // month names need three letters
  ['0 0 * * m', 'DayOfWeek is not in range'], // weekday names need two
  ['CRON_TZ=UTC', 'CronString has time zone but missing fields'],
  ['CRON_TZ=Mars/Olympus_Mons 0 0 * * *', 'unknown time zone Mars/Olympus_Mons'],
  ['@every', 'CronString does not have interval after @every'],
  ['@every 1x', 'unknown unit'],
  ['@every ten', 'invalid duration'],
  ['@every 500ms', 'interval is too small'],
  ['@every 1h/1h', 'phase cannot be greater than Interval'],
  ['@every 1h/-5m', 'phase is negative'],
];

const specErrors: [string, ScheduleSpecInput, string][] = [
  [
    'cron strings disagree on zone',
    { cronString: ['CRON_TZ=UTC 0 0 * * *', '0 1 * * *'] },
    'conflicting timezone names',
  ],
  [
    '@every next to a zoned cron string',
    { cronString: ['CRON_TZ=Asia/Tokyo 0 0 * * *', '@every 1h'] },
    'conflicting timezone names',
  ],
  [
    'cron zone differs from timezoneName',
    { cronString: ['CRON_TZ=Europe/Berlin 0 0 * * *'], timezoneName: 'America/New_York' },
    'conflicting timezone names',
  ],
  ['unknown timezoneName', { timezoneName: 'Nowhere/Special' }, 'unknown time zone Nowhere/Special'],
  ['numeric offsets are not zone names', { timezoneName: '+01:00' }, 'unknown time zone'],
  [
    'inline timezone data',
    { timezoneName: 'Custom', timezoneData: new Uint8Array([1, 2, 3]) },
    'timezone_data is not supported',
  ],
  ['interval missing', { interval: [{}] }, 'interval is too small'],
  ['interval under a second', { interval: [{ interval: dur(0, 999_999_999) }] }, 'interval is too small'],
  [
    'phase equal to interval',
    { interval: [{ interval: dur(60), phase: dur(60) }] },
    'phase cannot be greater than Interval',
  ],
  ['negative phase', { interval: [{ interval: dur(60), phase: dur(-1) }] }, 'phase is negative'],
  ['malformed duration', { interval: [{ interval: dur(60, 2_000_000_000) }] }, 'interval is not a valid duration'],
  ['structured hour 24', { structuredCalendar: [{ hour: [{ start: 24 }] }] }, 'Hour Start is not in range [0-23]'],
  [
    'structured day-of-week 7',
    { structuredCalendar: [{ dayOfWeek: [{ start: 7 }] }] },
    'DayOfWeek Start is not in range [0-6]',
  ],
  [
    'structured end before start',
    { structuredCalendar: [{ minute: [{ start: 30, end: 10 }] }] },
    'Minute End is before Start',
  ],
  [
    'structured negative step',
    { structuredCalendar: [{ second: [{ start: 0, end: 59, step: -5 }] }] },
    'Second has invalid Step',
  ],
  [
    'structured year out of range',
    { structuredCalendar: [{ year: [{ start: 1999 }] }] },
    'Year Start is not in range [2000-2100]',
  ],
  ['comment over 200 bytes', { structuredCalendar: [{ comment: 'é'.repeat(101) }] }, 'comment is too long'],
  [
    'several calendar field errors at once',
    { calendar: [{ hour: '25', minute: '61' }] },
    'Minute is not in range [0-59], Hour is not in range [0-23]',
  ],
];

function expectRejected(spec: ScheduleSpecInput, reason: string) {
  for (const fn of [compileScheduleSpec, canonicalizeScheduleSpec]) {
    let error: unknown;
    try {
      fn(spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScheduleSpecError);
    expect((error as Error).message).toMatch(/^Invalid schedule spec: /);
    expect((error as Error).message).toContain(reason);
  }
}

describe('rejected specs', () => {
  test.each(cronErrors)('cron %j', (cronString, reason) => expectRejected({ cronString: [cronString] }, reason));
  test.each(specErrors)('%s', (_label, spec, reason) => expectRejected(spec, reason));
});

describe('accepted edge cases', () => {
  test.each<[string, ScheduleSpecInput]>([
    [
      'exclusions are not range-checked',
      { excludeStructuredCalendar: [{ hour: [{ start: 99 }], dayOfWeek: [{ start: 7 }] }] },
    ],
    [
      'an unset end in a structured range means a single value',
      { structuredCalendar: [{ minute: [{ start: 30, end: 0 }] }] },
    ],
    [
      'cron zone equal to timezoneName',
      { cronString: ['CRON_TZ=Europe/Berlin 0 0 * * *'], timezoneName: 'Europe/Berlin' },
    ],
    ['zone aliases', { timezoneName: 'US/Pacific' }],
    ['empty spec', {}],
    ['null and undefined fields', { structuredCalendar: null, interval: undefined, cronString: null, startTime: null }],
    ['year 2100 is allowed', { cronString: ['0 0 1 1 * 2100'] }],
    // "#" always starts a comment, so Quartz's "nth weekday" reads as plain MON.
    ['MON#2 is just MON plus a comment', { cronString: ['0 0 * * MON#2'] }],
  ])('%s', (_label, spec) => {
    expect(() => compileScheduleSpec(spec)).not.toThrow();
    expect(() => canonicalizeScheduleSpec(spec)).not.toThrow();
  });
});
