/**
 * Time zone arithmetic for schedule calendars, built on Intl (no tz database of
 * our own).
 *
 * The real scheduler is written in Go and its DST behaviour is whatever Go's
 * `time.Date` does with wall-clock times that do not exist (spring-forward gap)
 * or exist twice (fall-back overlap). To produce the same action times we do not
 * "fix" those cases; instead `goDate` reproduces Go's resolution rule exactly:
 * guess the offset in effect at the wall time read as if it were UTC, and if the
 * resulting instant falls outside that offset's period, use the offset in effect
 * at that instant instead. Consequences, both matched on purpose:
 *  - a gap time resolves to an instant whose wall-clock hour differs from the one
 *    asked for (the calendar code uses that to skip it);
 *  - an overlap time resolves to the first occurrence in zones west of UTC
 *    (America/New_York) but to the second occurrence in zones east of UTC
 *    (Europe/Berlin).
 */
import { ScheduleSpecError } from './spec-error';

/** Broken-down wall-clock fields; month 1-12, weekday 0 = Sunday. */
export interface CivilFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

export interface Zone {
  readonly name: string;
  /** Seconds east of UTC in effect at the given instant (epoch seconds). */
  offsetAt(epochSec: number): number;
}

const UTC_ZONE: Zone = { name: 'UTC', offsetAt: () => 0 };

/** Epoch seconds of a wall-clock time read as UTC; out-of-range fields carry over like Go's time.Date. */
export function civilToEpoch(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  return Date.UTC(y, mo - 1, d, h, mi, s) / 1000;
}

export function epochToCivil(epochSec: number): CivilFields {
  const dt = new Date(epochSec * 1000);
  return {
    year: dt.getUTCFullYear(),
    month: dt.getUTCMonth() + 1,
    day: dt.getUTCDate(),
    hour: dt.getUTCHours(),
    minute: dt.getUTCMinutes(),
    second: dt.getUTCSeconds(),
    weekday: dt.getUTCDay(),
  };
}

/** Wall-clock fields of an instant in a zone (Go: t.In(loc).Date()/Clock()/Weekday()). */
export function localFields(zone: Zone, epochSec: number): CivilFields {
  return epochToCivil(epochSec + zone.offsetAt(epochSec));
}

/** Go's time.Date(y, mo, d, h, mi, s, 0, loc) as epoch seconds, including its DST quirks (see header). */
export function goDate(zone: Zone, y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const wall = civilToEpoch(y, mo, d, h, mi, s);
  const guess = zone.offsetAt(wall);
  return wall - zone.offsetAt(wall - guess);
}

/**
 * Offsets come from Intl, which costs microseconds per call, and the calendar
 * search asks for many nearby instants. Offsets are cached per UTC hour when the
 * offset is the same at both ends of the hour; tzdb has no zone that changes
 * offset and changes back within one hour, so that is safe. Hours containing a
 * transition are answered exactly, uncached.
 */
class IntlZone implements Zone {
  private readonly fmt: Intl.DateTimeFormat;
  private readonly hourCache = new Map<number, number>();

  constructor(readonly name: string) {
    this.fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  offsetAt(epochSec: number): number {
    const bucket = Math.floor(epochSec / 3600);
    const cached = this.hourCache.get(bucket);
    if (cached !== undefined) return cached;
    const atStart = this.exactOffset(bucket * 3600);
    const atEnd = this.exactOffset(bucket * 3600 + 3599);
    if (atStart !== atEnd) return this.exactOffset(epochSec);
    // Bounded so a long-running dev server cannot grow this without limit.
    if (this.hourCache.size > 50_000) this.hourCache.clear();
    this.hourCache.set(bucket, atStart);
    return atStart;
  }

  private exactOffset(epochSec: number): number {
    const f: Record<string, number> = {};
    for (const p of this.fmt.formatToParts(new Date(epochSec * 1000))) {
      if (p.type !== 'literal') f[p.type] = Number(p.value);
    }
    return civilToEpoch(f.year, f.month, f.day, f.hour, f.minute, f.second) - Math.floor(epochSec);
  }
}

const zoneCache = new Map<string, Zone>();

/**
 * Resolves a ScheduleSpec timezone_name the way Go's time.LoadLocation does:
 * "" and "UTC" mean UTC, "Local" means the host zone, anything else must be an
 * IANA name. Intl is more permissive than Go's zoneinfo lookup in two ways we
 * reject explicitly (numeric offsets such as "+01:00") or accept knowingly
 * (case-insensitive names).
 */
export function loadZone(name: string): Zone {
  if (name === '' || name === 'UTC') return UTC_ZONE;
  const cached = zoneCache.get(name);
  if (cached) return cached;
  let resolved = name;
  if (name === 'Local') resolved = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (/^[+-]/.test(resolved) || resolved.includes('..')) {
    throw new ScheduleSpecError(`unknown time zone ${name}`);
  }
  let zone: Zone;
  try {
    zone = new IntlZone(resolved);
  } catch {
    throw new ScheduleSpecError(`unknown time zone ${name}`);
  }
  zoneCache.set(name, zone);
  return zone;
}
