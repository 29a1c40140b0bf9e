/**
 * The server's canonical form of a ScheduleSpec: CalendarSpec strings and cron
 * strings compiled into StructuredCalendarSpec (and IntervalSpec for @every), a
 * cron CRON_TZ= prefix moved into timezone_name, then validated. The server
 * stores this form, so it is what DescribeSchedule shows; Describe additionally
 * fills in range defaults (end = start, step = 1), see `cleanRanges`.
 */
import {
  IntervalMsg,
  MAX_CALENDAR_YEAR,
  MIN_CALENDAR_YEAR,
  parseCalendarToStructured,
  parseCronString,
  RangeMsg,
  StructuredCalendarMsg,
} from './calendar-parse';
import { checkDurationValid, durationNanos, isSet } from './proto-values';
import { ScheduleSpecError } from './spec-error';

/** ScheduleSpec after canonicalization; Timestamp/Duration messages are carried over as given. */
export interface CanonicalSpec {
  structuredCalendar: StructuredCalendarMsg[];
  excludeStructuredCalendar: StructuredCalendarMsg[];
  interval: IntervalMsg[];
  timezoneName: string;
  timezoneData?: Uint8Array;
  startTime?: unknown;
  endTime?: unknown;
  jitter?: unknown;
}

const MAX_COMMENT_BYTES = 200;

// Decoded messages arrive untyped and possibly partial; every read below is defensive.

type Loose = any;

function cloneRanges(ranges: Loose): RangeMsg[] {
  return ((ranges ?? []) as Loose[]).map((r) => ({
    start: Number(r?.start ?? 0),
    end: Number(r?.end ?? 0),
    step: Number(r?.step ?? 0),
  }));
}

/** A plain copy of a decoded StructuredCalendarSpec, so canonicalization never mutates the caller's message. */
function cloneStructured(cal: Loose): StructuredCalendarMsg {
  return {
    second: cloneRanges(cal?.second),
    minute: cloneRanges(cal?.minute),
    hour: cloneRanges(cal?.hour),
    dayOfMonth: cloneRanges(cal?.dayOfMonth),
    month: cloneRanges(cal?.month),
    year: cloneRanges(cal?.year),
    dayOfWeek: cloneRanges(cal?.dayOfWeek),
    comment: String(cal?.comment ?? ''),
  };
}

function cloneDuration(d: Loose): Loose {
  return isSet(d) ? { ...d } : undefined;
}

function validateStructured(cal: StructuredCalendarMsg): void {
  const errs: string[] = [];
  const check = (ranges: RangeMsg[], field: string, min: number, max: number) => {
    for (const r of ranges) {
      if (r.start < min || r.start > max) errs.push(`${field} Start is not in range [${min}-${max}]`);
      if (r.end !== 0 && (r.end < r.start || r.end > max)) {
        errs.push(`${field} End is before Start or not in range [${min}-${max}]`);
      }
      if (r.step < 0) errs.push(`${field} has invalid Step`);
    }
  };
  check(cal.second, 'Second', 0, 59);
  check(cal.minute, 'Minute', 0, 59);
  check(cal.hour, 'Hour', 0, 23);
  check(cal.dayOfMonth, 'DayOfMonth', 1, 31);
  check(cal.month, 'Month', 1, 12);
  check(cal.year, 'Year', MIN_CALENDAR_YEAR, MAX_CALENDAR_YEAR);
  check(cal.dayOfWeek, 'DayOfWeek', 0, 6);
  if (Buffer.byteLength(cal.comment, 'utf8') > MAX_COMMENT_BYTES) errs.push('comment is too long');
  if (errs.length > 0) throw new ScheduleSpecError(`invalid calendar spec: ${errs.join(', ')}`);
}

function validateInterval(iv: IntervalMsg): void {
  const every = durationNanos(iv.interval);
  const phase = durationNanos(iv.phase);
  if (every < 1_000_000_000n) throw new ScheduleSpecError('interval is too small');
  if (phase < 0n) throw new ScheduleSpecError('phase is negative');
  if (phase >= every) throw new ScheduleSpecError('phase cannot be greater than Interval');
}

/** Canonicalizes and validates; throws ScheduleSpecError with the reason. */
export function canonicalize(input: Loose): CanonicalSpec {
  const spec = input ?? {};
  // The frontend checks the raw Duration messages before anything else.
  for (const iv of (spec.interval ?? []) as Loose[]) {
    const bad = checkDurationValid(iv?.interval);
    if (bad) throw new ScheduleSpecError(`interval is not a valid duration: ${bad}`);
    const badPhase = checkDurationValid(iv?.phase);
    if (badPhase) throw new ScheduleSpecError(`phase is not a valid duration: ${badPhase}`);
  }

  const structuredCalendar = ((spec.structuredCalendar ?? []) as Loose[]).map(cloneStructured);
  const excludeStructuredCalendar = ((spec.excludeStructuredCalendar ?? []) as Loose[]).map(cloneStructured);
  const interval: IntervalMsg[] = ((spec.interval ?? []) as Loose[]).map((iv) => ({
    interval: cloneDuration(iv?.interval),
    ...(isSet(iv?.phase) ? { phase: cloneDuration(iv.phase) } : {}),
  }));

  for (const cal of (spec.calendar ?? []) as Loose[]) structuredCalendar.push(parseCalendarToStructured(cal ?? {}));
  for (const cal of (spec.excludeCalendar ?? []) as Loose[]) {
    excludeStructuredCalendar.push(parseCalendarToStructured(cal ?? {}));
  }

  // Every cron string must agree on its zone prefix, including "no prefix".
  let cronTz: string | undefined;
  for (const cron of (spec.cronString ?? []) as Loose[]) {
    const parsed = parseCronString(String(cron ?? ''));
    if (cronTz !== undefined && parsed.timezone !== cronTz) {
      throw new ScheduleSpecError('conflicting timezone names');
    }
    cronTz = parsed.timezone;
    if (parsed.calendar) structuredCalendar.push(parsed.calendar);
    if (parsed.interval) interval.push(parsed.interval);
  }

  let timezoneName = String(spec.timezoneName ?? '');
  const tzData: Uint8Array | undefined = spec.timezoneData?.length > 0 ? spec.timezoneData : undefined;
  if (cronTz) {
    if ((timezoneName !== '' && timezoneName !== cronTz) || tzData) {
      throw new ScheduleSpecError('conflicting timezone names');
    }
    timezoneName = cronTz;
  }

  // Only the calendars that generate times are validated, as on the server;
  // exclusions with impossible values simply never match.
  structuredCalendar.forEach(validateStructured);
  interval.forEach(validateInterval);

  return {
    structuredCalendar,
    excludeStructuredCalendar,
    interval,
    timezoneName,
    ...(tzData ? { timezoneData: tzData } : {}),
    ...(isSet(spec.startTime) ? { startTime: { ...spec.startTime } } : {}),
    ...(isSet(spec.endTime) ? { endTime: { ...spec.endTime } } : {}),
    ...(isSet(spec.jitter) ? { jitter: { ...spec.jitter } } : {}),
  };
}

/** Describe's presentation of ranges: end < start becomes end = start, step 0 becomes 1. */
function cleanRanges(ranges: RangeMsg[]): RangeMsg[] {
  return ranges.map((r) => ({
    start: r.start,
    end: r.end < r.start ? r.start : r.end,
    step: r.step === 0 ? 1 : r.step,
  }));
}

function cleanCalendar(cal: StructuredCalendarMsg): StructuredCalendarMsg {
  return {
    second: cleanRanges(cal.second),
    minute: cleanRanges(cal.minute),
    hour: cleanRanges(cal.hour),
    dayOfMonth: cleanRanges(cal.dayOfMonth),
    month: cleanRanges(cal.month),
    year: cleanRanges(cal.year),
    dayOfWeek: cleanRanges(cal.dayOfWeek),
    comment: cal.comment,
  };
}

/** The spec as DescribeSchedule returns it, in protobufjs's decoded (camelCase) shape. */
export function describeForm(c: CanonicalSpec): Loose {
  return {
    structuredCalendar: c.structuredCalendar.map(cleanCalendar),
    cronString: [],
    calendar: [],
    interval: c.interval,
    excludeCalendar: [],
    excludeStructuredCalendar: c.excludeStructuredCalendar.map(cleanCalendar),
    ...(c.startTime !== undefined ? { startTime: c.startTime } : {}),
    ...(c.endTime !== undefined ? { endTime: c.endTime } : {}),
    ...(c.jitter !== undefined ? { jitter: c.jitter } : {}),
    timezoneName: c.timezoneName,
    ...(c.timezoneData ? { timezoneData: c.timezoneData } : {}),
  };
}
