/**
 * Matching and "next matching time" for one StructuredCalendarSpec in one zone.
 *
 * The search deliberately follows the real scheduler's algorithm step for step
 * (walk year, month, day, hour, minute, second outward-in, carrying over like an
 * odometer) instead of a cleaner design, because its DST behaviour is part of
 * what users observe:
 *  - wall times inside a spring-forward gap are skipped, not shifted;
 *  - in a fall-back overlap an hourly-or-finer schedule runs through the repeated
 *    hour twice, and in zones west of UTC a daily 1:30 fires at both 1:30s;
 *  - in zones east of UTC (Go's time.Date resolves overlap times to the second
 *    occurrence there) a daily 2:30 fires once, at the second 2:30, and a
 *    sub-hourly schedule jumps from the first :00 of the repeated hour to the
 *    second occurrence of the next slot.
 * All times have one-second resolution; inputs and outputs are epoch seconds.
 */
import { MAX_CALENDAR_YEAR } from './calendar-parse';
import { goDate, localFields, Zone } from './time-zone';

export interface RangeInput {
  start?: number | null;
  end?: number | null;
  step?: number | null;
}

type Matcher = (v: number) => boolean;

/**
 * Expands ranges the server's way (end < start means end = start, step 0 means
 * 1). Values are capped at `cap` so hostile ranges cannot make us loop for long;
 * values beyond it could never match a real clock field anyway.
 */
function collect(ranges: RangeInput[] | null | undefined, cap: number): Set<number> {
  const values = new Set<number>();
  for (const r of ranges ?? []) {
    const start = r.start ?? 0;
    const step = (r.step ?? 0) > 0 ? (r.step as number) : 1;
    const end = Math.min(Math.max(r.end ?? 0, start), cap);
    // Negative values can never match; begin at the first in-step value >= 0.
    const first = start >= 0 ? start : start + Math.ceil(-start / step) * step;
    for (let v = first; v <= end; v += step) values.add(v);
  }
  return values;
}

/** Clock/date fields: no ranges matches nothing (StructuredCalendarSpec has no defaults). */
function fieldMatcher(ranges: RangeInput[] | null | undefined): Matcher {
  const bits = new Array<boolean>(64).fill(false);
  for (const v of collect(ranges, 63)) bits[v] = true;
  return (v) => bits[v] === true;
}

/** Year is the exception: no ranges means every year. */
function yearMatcher(ranges: RangeInput[] | null | undefined): Matcher {
  if (!ranges || ranges.length === 0) return () => true;
  const values = collect(ranges, 9999);
  return (v) => values.has(v);
}

function daysInMonth(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export interface StructuredCalendarInput {
  second?: RangeInput[] | null;
  minute?: RangeInput[] | null;
  hour?: RangeInput[] | null;
  dayOfMonth?: RangeInput[] | null;
  month?: RangeInput[] | null;
  year?: RangeInput[] | null;
  dayOfWeek?: RangeInput[] | null;
}

/** Far more steps than any satisfiable calendar needs before 2100; only a safety net against bugs. */
const MAX_STEPS = 2_000_000;

export class CompiledCalendar {
  private readonly year: Matcher;
  private readonly month: Matcher;
  private readonly dayOfMonth: Matcher;
  private readonly dayOfWeek: Matcher;
  private readonly hour: Matcher;
  private readonly minute: Matcher;
  private readonly second: Matcher;

  constructor(
    cal: StructuredCalendarInput,
    private readonly zone: Zone,
  ) {
    this.year = yearMatcher(cal.year);
    this.month = fieldMatcher(cal.month);
    this.dayOfMonth = fieldMatcher(cal.dayOfMonth);
    this.dayOfWeek = fieldMatcher(cal.dayOfWeek);
    this.hour = fieldMatcher(cal.hour);
    this.minute = fieldMatcher(cal.minute);
    this.second = fieldMatcher(cal.second);
  }

  /** Whether the wall-clock reading of the instant matches every field (used for exclusions). */
  matches(epochSec: number): boolean {
    const f = localFields(this.zone, epochSec);
    return (
      this.year(f.year) &&
      this.month(f.month) &&
      this.dayOfMonth(f.day) &&
      this.dayOfWeek(f.weekday) &&
      this.hour(f.hour) &&
      this.minute(f.minute) &&
      this.second(f.second)
    );
  }

  /** Earliest matching instant strictly after `afterSec` (whole seconds), or undefined if none by the end of 2100. */
  // eslint-disable-next-line max-lines-per-function -- the real scheduler's search followed step for step (see the file's header: its DST behaviour is observable), kept in that shape to be read against it
  next(afterSec: number): number | undefined {
    const z = this.zone;
    const now = localFields(z, afterSec);
    let { year: y, month: mo, day: d, hour: h, minute: m, second: s } = now;
    // An hour ago had the same wall-clock hour: we are in the second pass of a
    // repeated (fall-back) hour, so wall times must be read one hour later.
    let dst = localFields(z, afterSec - 3600).hour === h ? 3600 : 0;
    s++;

    for (let steps = 0; steps < MAX_STEPS; steps++) {
      if (s >= 60) {
        m++;
        s = 0;
      }
      if (m >= 60) {
        const prev = goDate(z, y, mo, d, h, 0, 0);
        h++;
        m = 0;
        const following = goDate(z, y, mo, d, h, 0, 0);
        // Moving to the next hour took more than an hour of real time: we just
        // stepped over a repeated hour, so go through it again, one hour later.
        if (dst === 0 && following - prev > 3600) {
          h--;
          dst = 3600;
        } else {
          dst = 0;
        }
      }
      if (h >= 24) {
        d++;
        h = 0;
      }
      if (d > daysInMonth(mo, y)) {
        mo++;
        d = 1;
      }
      if (mo > 12) {
        y++;
        mo = 1;
      }
      if (y > MAX_CALENDAR_YEAR) return undefined;

      if (!this.year(y)) {
        [y, mo, d, h, m, s, dst] = [y + 1, 1, 1, 0, 0, 0, 0];
        continue;
      }
      let restart = false;
      while (!this.month(mo)) {
        [mo, d, h, m, s, dst] = [mo + 1, 1, 0, 0, 0, 0];
        if (mo > 12) {
          restart = true;
          break;
        }
      }
      if (restart) continue;
      while (!this.dayOfMonth(d) || !this.dayOfWeek(localFields(z, goDate(z, y, mo, d, h, m, s)).weekday)) {
        [d, h, m, s, dst] = [d + 1, 0, 0, 0, 0];
        if (d > daysInMonth(mo, y)) {
          restart = true;
          break;
        }
      }
      if (restart) continue;
      while (!this.hour(h)) {
        [h, m, s, dst] = [h + 1, 0, 0, 0];
        if (h >= 24) {
          restart = true;
          break;
        }
      }
      if (restart) continue;
      while (!this.minute(m)) {
        [m, s] = [m + 1, 0];
        if (m >= 60) {
          restart = true;
          break;
        }
      }
      if (restart) continue;
      while (!this.second(s)) {
        s++;
        if (s >= 60) {
          restart = true;
          break;
        }
      }
      if (restart) continue;

      const candidate = goDate(z, y, mo, d, h, m, s);
      // The wall time fell in a spring-forward gap (it resolved to another hour): skip it.
      if (localFields(z, candidate).hour !== h) {
        [h, m, s] = [h + 1, 0, 0];
        continue;
      }
      return candidate + dst;
    }
    return undefined;
  }
}
