/**
 * String forms of calendar specs (CalendarSpec fields and cron strings) turned
 * into StructuredCalendarSpec ranges, the only form the server keeps. The
 * resulting ranges are exactly the server's (e.g. "7" for Sunday becomes 0, a
 * single value is {start, end: 0, step: 0}), because DescribeSchedule shows them.
 */
import { parseTemporalDuration } from './go-duration';
import { durationMessage } from './proto-values';
import { ScheduleSpecError } from './spec-error';

export interface RangeMsg {
  start: number;
  end: number;
  step: number;
}

export interface StructuredCalendarMsg {
  second: RangeMsg[];
  minute: RangeMsg[];
  hour: RangeMsg[];
  dayOfMonth: RangeMsg[];
  month: RangeMsg[];
  year: RangeMsg[];
  dayOfWeek: RangeMsg[];
  comment: string;
}

export interface IntervalMsg {
  interval: { seconds: number; nanos: number };
  phase?: { seconds: number; nanos: number };
}

/** Calendar years the server accepts; it also stops searching for matches after MAX_CALENDAR_YEAR. */
export const MIN_CALENDAR_YEAR = 2000;
export const MAX_CALENDAR_YEAR = 2100;

type Mode = 'int' | 'year' | 'month' | 'dow';

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Go's strconv.Atoi accepts an optional sign and ASCII digits only. */
function atoi(s: string): number | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined;
}

/**
 * One value: a decimal integer, or (by mode) a month name prefix of at least 3
 * letters or a weekday name prefix of at least 2, case-insensitive.
 */
function parseValue(s: string, min: number, max: number, mode: Mode): number | undefined {
  const names = mode === 'month' ? MONTHS : mode === 'dow' ? DAYS : undefined;
  const minLen = mode === 'month' ? 3 : 2;
  if (names && s.length >= minLen) {
    const lower = s.toLowerCase();
    const idx = names.findIndex((n) => n.startsWith(lower));
    if (idx >= 0) {
      const v = mode === 'month' ? idx + 1 : idx;
      return v < min || v > max ? undefined : v;
    }
  }
  const v = atoi(s);
  return v === undefined || v < min || v > max ? undefined : v;
}

/**
 * Parses "*", "x", "x-z", "x-z/y", "x/y" (x to max by y) and comma lists of
 * those into ranges. Throws the error text for the field.
 */
function makeRange(raw: string, field: string, def: string, min: number, max: number, mode: Mode): RangeMsg[] {
  let s = raw.trim();
  if (s === '') s = def;
  // The server spells "every year" as no ranges at all.
  if (s === '*' && mode === 'year') return [];
  const ranges: RangeMsg[] = [];
  for (let part of s.split(',')) {
    let step = 1;
    let hasStep = false;
    const slashes = part.split('/').length - 1;
    if (slashes > 1) throw new Error(`${field} has too many slashes`);
    if (slashes === 1) {
      const [before, after] = part.split('/');
      if (after === '') throw new Error(`${field} missing step value`);
      const parsed = atoi(after);
      if (parsed === undefined || parsed < 1) throw new Error(`${field} has invalid Step`);
      part = before;
      step = parsed;
      hasStep = true;
    }
    let start = min;
    let end = max;
    if (part !== '*') {
      if (part.includes('-')) {
        const pieces = part.split('-');
        if (pieces.length !== 2) throw new Error(`${field} has too many dashes`);
        const a = parseValue(pieces[0], min, max, mode);
        if (a === undefined) throw new Error(`${field} Start is not in range [${min}-${max}]`);
        const b = parseValue(pieces[1], a, max, mode);
        if (b === undefined) throw new Error(`${field} End is before Start or not in range [${min}-${max}]`);
        start = a;
        end = b;
      } else {
        const v = parseValue(part, min, max, mode);
        if (v === undefined) throw new Error(`${field} is not in range [${min}-${max}]`);
        start = v;
        // With a step, a lone value means "from here to the maximum".
        if (!hasStep) end = v;
      }
    }
    // Day-of-week accepts 7 for Sunday but StructuredCalendarSpec only allows 0-6:
    // fold 7 into an extra 0 when the range would actually reach it.
    if (mode === 'dow' && end === 7) {
      if ((7 - start) % step === 0 && (step > 1 || start > 1)) {
        ranges.push({ start: 0, end: 0, step: 0 });
        if (start === 7) continue;
      }
      end = 6;
    }
    // Zero values are the proto defaults, so the server stores the shortest form.
    ranges.push({ start, end: start === end ? 0 : end, step: step === 1 ? 0 : step });
  }
  return ranges;
}

export interface CalendarStrings {
  second?: string | null;
  minute?: string | null;
  hour?: string | null;
  dayOfMonth?: string | null;
  month?: string | null;
  year?: string | null;
  dayOfWeek?: string | null;
  comment?: string | null;
}

/** CalendarSpec -> StructuredCalendarSpec; empty fields take CalendarSpec's defaults (second/minute/hour 0, rest *). */
export function parseCalendarToStructured(cal: CalendarStrings): StructuredCalendarMsg {
  const errors: string[] = [];
  const field = (s: string | null | undefined, name: string, def: string, min: number, max: number, mode: Mode) => {
    try {
      return makeRange(s ?? '', name, def, min, max, mode);
    } catch (e) {
      errors.push((e as Error).message);
      return [];
    }
  };
  const out: StructuredCalendarMsg = {
    second: field(cal.second, 'Second', '0', 0, 59, 'int'),
    minute: field(cal.minute, 'Minute', '0', 0, 59, 'int'),
    hour: field(cal.hour, 'Hour', '0', 0, 23, 'int'),
    dayOfMonth: field(cal.dayOfMonth, 'DayOfMonth', '*', 1, 31, 'int'),
    month: field(cal.month, 'Month', '*', 1, 12, 'month'),
    year: field(cal.year, 'Year', '*', MIN_CALENDAR_YEAR, MAX_CALENDAR_YEAR, 'year'),
    dayOfWeek: field(cal.dayOfWeek, 'DayOfWeek', '*', 0, 7, 'dow'),
    comment: cal.comment ?? '',
  };
  if (errors.length > 0) throw new ScheduleSpecError(errors.join(', '));
  return out;
}

const PREDEFINED = new Map<string, string>([
  ['@yearly', '0 0 1 1 *'],
  ['@annually', '0 0 1 1 *'],
  ['@monthly', '0 0 1 * *'],
  ['@weekly', '0 0 * * 0'],
  ['@daily', '0 0 * * *'],
  ['@midnight', '0 0 * * *'],
  ['@hourly', '0 * * * *'],
]);

export interface ParsedCron {
  calendar?: StructuredCalendarMsg;
  interval?: IntervalMsg;
  /** Zone from a CRON_TZ=/TZ= prefix; "" when absent (and always "" for @every, as on the server). */
  timezone: string;
}

/**
 * One cron_string entry: optional "CRON_TZ=zone " or "TZ=zone " prefix, optional
 * trailing "# comment", then @every, a predefined @name, or 5-7 fields
 * ([second] minute hour day-of-month month day-of-week [year]).
 */
export function parseCronString(input: string): ParsedCron {
  let c = input.trim();
  let timezone = '';
  if (c.startsWith('TZ=') || c.startsWith('CRON_TZ=')) {
    const space = c.indexOf(' ');
    if (space < 0) throw new ScheduleSpecError('CronString has time zone but missing fields');
    timezone = c.slice(c.indexOf('=') + 1, space);
    c = c.slice(space + 1);
  }
  let comment = '';
  const hash = c.indexOf('#');
  if (hash >= 0) {
    comment = c.slice(hash + 1).trim();
    c = c.slice(0, hash);
  }
  c = c.trim();

  if (c.startsWith('@every')) return { interval: parseEvery(c), timezone: '' };
  c = PREDEFINED.get(c) ?? c;

  const f = c.split(/\s+/).filter((t) => t !== '');
  if (f.length < 5 || f.length > 7) throw new ScheduleSpecError('CronString does not have 5-7 fields');
  const withSeconds = f.length === 7;
  const [second, minute, hour, dayOfMonth, month, dayOfWeek, year] = withSeconds ? f : ['0', ...f];
  return {
    calendar: parseCalendarToStructured({
      second,
      minute,
      hour,
      // Quartz-style "?" ("no specific value") is accepted as "*" for convenience;
      // the real server rejects it (see the behaviour notes in spec.ts).
      dayOfMonth: dayOfMonth === '?' ? '*' : dayOfMonth,
      month,
      dayOfWeek: dayOfWeek === '?' ? '*' : dayOfWeek,
      year,
      comment,
    }),
    timezone,
  };
}

/** "@every 14h" or "@every 14h/3h" (interval/phase) -> IntervalSpec. */
function parseEvery(c: string): IntervalMsg {
  const space = c.indexOf(' ');
  if (space < 0) throw new ScheduleSpecError('CronString does not have interval after @every');
  const rest = c.slice(space + 1);
  const slash = rest.indexOf('/');
  const ivText = slash < 0 ? rest : rest.slice(0, slash);
  const phaseText = slash < 0 ? '' : rest.slice(slash + 1);
  const interval = durationMessage(parseTemporalDuration(ivText));
  if (phaseText === '') return { interval };
  return { interval, phase: durationMessage(parseTemporalDuration(phaseText)) };
}
