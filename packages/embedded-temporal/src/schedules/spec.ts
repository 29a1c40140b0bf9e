/**
 * When does a Temporal Schedule fire? Compiles a temporal.api.schedule.v1.ScheduleSpec
 * (as decoded by protobufjs) into a pure function of time, mirroring the real
 * server's scheduler so the dev server's action times match a real cluster's.
 *
 * Behaviour, matched on purpose:
 *  - Union of all structured calendars, calendars, cron strings and intervals,
 *    minus times matching any exclusion; start_time/end_time bound it inclusively.
 *  - One-second resolution. Nothing is searched for beyond the year 2100.
 *  - StructuredCalendarSpec has no defaults: a field with no ranges matches
 *    nothing (except year, where no ranges means every year). The defaults
 *    "second/minute/hour 0, everything else *" belong to the string CalendarSpec
 *    and cron forms, and to SDKs that fill them in before sending.
 *  - Day-of-month and day-of-week must BOTH match. Classic (Vixie) cron fires
 *    when EITHER matches if both are restricted; Temporal deliberately does not,
 *    so "0 0 13 * FRI" means Friday the 13th only.
 *  - Intervals count from the Unix epoch: epoch + n*interval + phase, with both
 *    truncated to whole seconds; interval >= 1s and 0 <= phase < interval.
 *  - Time zones follow Go's rules: wall times in a spring-forward gap are skipped;
 *    the repeated fall-back hour is handled as described in compiled-calendar.ts.
 *  - Jitter: deterministic per (nominal time, seed) using the server's FarmHash
 *    fingerprint, in [0, min(jitter, gap to the next raw candidate time)) at
 *    millisecond granularity (the gap ignores exclusions and end_time). With
 *    the server's seed `${namespaceId}-${scheduleId}` the result is identical
 *    to a real cluster's. Because jitter never reaches the following time,
 *    walking from either the previous nominal or the previous actual time
 *    yields the same next nominal time (the server walks from the actual one).
 *
 * Where this knowingly differs:
 *  - Cron "?" in day-of-month/day-of-week is accepted as "*" (the server rejects it).
 *  - timezone_data (an inline TZif file) is refused rather than parsed.
 *  - Time zone names are resolved by Intl/ICU: lookups are case-insensitive and
 *    the zone rules are Node's, not the host's zoneinfo.
 *  - The exclusion search gives up (no next time) after one million excluded
 *    candidates instead of spinning; the server's limit is off by default.
 */
import { canonicalize, CanonicalSpec, describeForm } from './canonicalize';
import { MAX_CALENDAR_YEAR } from './calendar-parse';
import { CompiledCalendar } from './compiled-calendar';
import { fingerprint32 } from './farmhash32';
import { durationNanos, durationSeconds, timestampMs } from './proto-values';
import { ScheduleSpecError } from './spec-error';
import { epochToCivil, loadZone, Zone } from './time-zone';

export { ScheduleSpecError } from './spec-error';

/** ScheduleSpec as decoded by protobufjs (camelCase fields; Timestamps/Durations as {seconds: number|Long|string, nanos}); treat all fields as optional. */

export type ScheduleSpecInput = any;

export interface NextTime {
  /** The matching time, before jitter (epoch ms). */
  nominalMs: number;
  /** When the action should actually be taken (epoch ms). */
  actualMs: number;
}

export interface CompiledScheduleSpec {
  /** Next nominal action time strictly after `afterMs` (epoch ms), or undefined when there is none (past endTime, or empty spec). */
  nextNominal(afterMs: number): number | undefined;
  /**
   * Jitter applied like the real server (deterministic per nominal time, in [0, jitter)), returns actual time.
   * `seed` is the server's per-schedule seed, `${namespaceId}-${scheduleId}`; default "".
   */
  withJitter(nominalMs: number, seed?: string): number;
  /** nextNominal and withJitter together, as the server's GetNextTime. */
  nextTime(afterMs: number, seed?: string): NextTime | undefined;
}

/** After this many consecutive excluded candidates we stop looking (see header). */
const MAX_EXCLUDED_CANDIDATES = 1_000_000;
/** Go's time.Time binary encoding counts seconds from 0001-01-01, not 1970. */
const GO_SECONDS_TO_UNIX = 62_135_596_800n;

interface CompiledInterval {
  every: number;
  phase: number;
}

class CompiledSpecImpl implements CompiledScheduleSpec {
  private readonly calendars: CompiledCalendar[];
  private readonly excludes: CompiledCalendar[];
  private readonly intervals: CompiledInterval[];
  private readonly startMs: number;
  private readonly endMs: number | undefined;
  private readonly jitterNs: bigint;

  constructor(spec: CanonicalSpec, zone: Zone) {
    this.calendars = spec.structuredCalendar.map((c) => new CompiledCalendar(c, zone));
    this.excludes = spec.excludeStructuredCalendar.map((c) => new CompiledCalendar(c, zone));
    this.intervals = spec.interval.map((iv) => ({
      every: Math.max(durationSeconds(iv.interval), 1),
      phase: Math.max(durationSeconds(iv.phase), 0),
    }));
    // An unset start time reads as the epoch on the server, which is harmless.
    this.startMs = spec.startTime !== undefined ? timestampMs(spec.startTime) : 0;
    this.endMs = spec.endTime !== undefined ? timestampMs(spec.endTime) : undefined;
    this.jitterNs = durationNanos(spec.jitter);
  }

  nextNominal(afterMs: number): number | undefined {
    // A NaN would otherwise walk the calendar search all the way to its safety limit.
    if (!Number.isFinite(afterMs)) throw new RangeError(`nextNominal: invalid time ${afterMs}`);
    // Start one second before start_time so that start_time itself can match.
    let after = Math.floor(Math.max(afterMs, this.startMs - 1000) / 1000);
    for (let i = 0; i < MAX_EXCLUDED_CANDIDATES; i++) {
      const nominal = this.rawNext(after);
      if (nominal === undefined || this.pastEnd(nominal)) return undefined;
      if (!this.excludes.some((ex) => ex.matches(nominal))) return nominal * 1000;
      after = nominal;
    }
    return undefined;
  }

  withJitter(nominalMs: number, seed = ''): number {
    if (!Number.isFinite(nominalMs)) throw new RangeError(`withJitter: invalid time ${nominalMs}`);
    let maxNs = this.jitterNs > 0n ? this.jitterNs : 0n;
    // Never jitter past the following nominal time (exclusions and end time ignored, as on the server).
    const following = this.rawNext(Math.floor(nominalMs / 1000));
    if (following !== undefined) {
      const gapNs = BigInt(following * 1000 - nominalMs) * 1_000_000n;
      if (gapNs < maxNs) maxNs = gapNs;
    }
    let maxMs = maxNs / 1_000_000n;
    if (maxMs > 0xffffffffn) maxMs = 0xffffffffn;
    if (maxMs <= 0n) return nominalMs;
    const fp = BigInt(fingerprint32(jitterInput(nominalMs, seed)));
    // Scale a 32-bit hash onto [0, maxMs) without floating point, as the server does.
    return nominalMs + Number((fp * maxMs) >> 32n);
  }

  nextTime(afterMs: number, seed = ''): NextTime | undefined {
    const nominalMs = this.nextNominal(afterMs);
    if (nominalMs === undefined) return undefined;
    return { nominalMs, actualMs: this.withJitter(nominalMs, seed) };
  }

  /** Earliest candidate from any calendar or interval, ignoring exclusions and bounds (epoch seconds). */
  private rawNext(afterSec: number): number | undefined {
    let best: number | undefined;
    for (const cal of this.calendars) {
      const t = cal.next(afterSec);
      if (t !== undefined && (best === undefined || t < best)) best = t;
    }
    for (const { every, phase } of this.intervals) {
      // Truncating division, like Go's, keeps results identical just after the epoch too.
      const t = (Math.trunc((afterSec - phase) / every) + 1) * every + phase;
      if (best === undefined || t < best) best = t;
    }
    return best;
  }

  private pastEnd(nominalSec: number): boolean {
    if (this.endMs !== undefined && nominalSec * 1000 > this.endMs) return true;
    return epochToCivil(nominalSec).year > MAX_CALENDAR_YEAR;
  }
}

/**
 * The bytes the server hashes: Go's time.MarshalBinary of the nominal time in UTC
 * (version 1, seconds since year 1, nanoseconds, offset -1 meaning UTC), then the seed.
 */
function jitterInput(nominalMs: number, seed: string): Uint8Array {
  const unixSec = Math.floor(nominalMs / 1000);
  const nanos = (nominalMs - unixSec * 1000) * 1_000_000;
  const seedBytes = Buffer.from(seed, 'utf8');
  const out = Buffer.alloc(15 + seedBytes.length);
  out[0] = 1;
  out.writeBigInt64BE(BigInt(unixSec) + GO_SECONDS_TO_UNIX, 1);
  out.writeUInt32BE(nanos, 9);
  out.writeInt16BE(-1, 13);
  seedBytes.copy(out, 15);
  return out;
}

/** Canonical form plus its zone, or a ScheduleSpecError prefixed the way the frontend words it. */
function prepare(spec: ScheduleSpecInput): { canonical: CanonicalSpec; zone: Zone } {
  try {
    const canonical = canonicalize(spec);
    if (canonical.timezoneData) {
      throw new ScheduleSpecError('timezone_data is not supported by the dev server; use timezone_name');
    }
    return { canonical, zone: loadZone(canonical.timezoneName) };
  } catch (e) {
    if (e instanceof ScheduleSpecError) throw new ScheduleSpecError(`Invalid schedule spec: ${e.message}`);
    throw e;
  }
}

/** Throws ScheduleSpecError (message starting "Invalid schedule spec: ") for input the server would reject. */
export function compileScheduleSpec(spec: ScheduleSpecInput): CompiledScheduleSpec {
  const { canonical, zone } = prepare(spec);
  return new CompiledSpecImpl(canonical, zone);
}

/**
 * What DescribeSchedule returns for the spec: the real server converts cronString entries and `calendar` into
 * `structuredCalendar`. Returns a plain object in the same decoded shape. Validates like compileScheduleSpec.
 */
export function canonicalizeScheduleSpec(spec: ScheduleSpecInput): ScheduleSpecInput {
  return describeForm(prepare(spec).canonical);
}
