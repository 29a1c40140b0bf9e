// Cron schedules of workflows (StartWorkflowExecution.cronSchedule).
//
// The real server parses these with robfig/cron v3 (cron.ParseStandard), not
// with the Schedules spec compiler, and the two disagree on purpose-visible
// points, so this is a separate, faithful implementation of that parser:
//  - exactly five fields (minute hour day-of-month month day-of-week), or a
//    descriptor (@yearly @annually @monthly @weekly @daily @midnight @hourly,
//    @every <Go duration>), optionally prefixed by CRON_TZ=<zone> or TZ=<zone>;
//  - day-of-month and day-of-week are OR-ed when both are restricted (neither
//    is "*" or "?"), classic Vixie behaviour: "0 0 13 * FRI" fires on every 13th
//    and on every Friday;
//  - "*" or "?" in any field; "N/step" means N..max; names (JAN, MON) are
//    case-insensitive; day-of-week is 0-6 (7 is refused);
//  - times are UTC unless a zone prefix is given; the search gives up five years
//    ahead (an unsatisfiable spec such as "0 0 30 2 *" is refused at start).
// The next run starts at the first cron time at or after the previous run's
// close that is after its scheduled time, rounded up to whole seconds.
import { invalidArgument } from '../errors';
import { goDate, loadZone, localFields, Zone } from '../schedules/time-zone';
import { parseGoDuration } from '../schedules/go-duration';

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

/** One field: which values match, and whether it was written as a bare "*" / "?" (robfig's star bit). */
interface Field {
  bits: boolean[];
  star: boolean;
}

interface SpecSchedule {
  kind: 'spec';
  minute: Field;
  hour: Field;
  dom: Field;
  month: Field;
  dow: Field;
  zone: Zone;
}

interface EverySchedule {
  kind: 'every';
  delaySec: number;
}

export type CronSchedule = SpecSchedule | EverySchedule;

export class CronParseError extends Error {}

function parseInt10(s: string): number {
  // strconv.Atoi: optional sign, decimal digits only.
  if (!/^[+-]?\d+$/.test(s)) throw new CronParseError(`failed to parse int from ${s}`);
  const n = Number(s);
  if (n < 0) throw new CronParseError(`negative number (${n}) not allowed: ${s}`);
  return n;
}

function parseIntOrName(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()];
  return named ?? parseInt10(s);
}

function addRange(expr: string, b: Bounds, f: Field): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0], b);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1], b);
    else throw new CronParseError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseInt10(rangeAndStep[1]);
    if (single) end = b.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new CronParseError(`too many slashes: ${expr}`);
  }
  if (start < b.min) throw new CronParseError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new CronParseError(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new CronParseError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronParseError(`step of range should be a positive number: ${expr}`);
  for (let v = start; v <= end; v += step) f.bits[v] = true;
  if (star) f.star = true;
}

function parseField(text: string, b: Bounds): Field {
  const f: Field = { bits: [], star: false };
  for (const part of text.split(',')) addRange(part, b, f);
  return f;
}

function fixed(b: Bounds, value?: number): Field {
  const f: Field = { bits: [], star: value === undefined };
  for (let v = b.min; v <= b.max; v++) f.bits[v] = value === undefined || v === value;
  return f;
}

const DESCRIPTORS: Record<
  string,
  [number | undefined, number | undefined, number | undefined, number | undefined, number | undefined]
> = {
  // minute, hour, day-of-month, month, day-of-week (undefined = every value, with the star bit)
  '@yearly': [0, 0, 1, 1, undefined],
  '@annually': [0, 0, 1, 1, undefined],
  '@monthly': [0, 0, 1, undefined, undefined],
  '@weekly': [0, 0, undefined, undefined, 0],
  '@daily': [0, 0, undefined, undefined, undefined],
  '@midnight': [0, 0, undefined, undefined, undefined],
  '@hourly': [0, undefined, undefined, undefined, undefined],
};

/** robfig/cron v3 ParseStandard. Throws CronParseError. */
export function parseCron(input: string): CronSchedule {
  let spec = input;
  if (spec.length === 0) throw new CronParseError('empty spec string');
  let zone = loadZone('UTC');
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    if (space < 0) throw new CronParseError('missing fields after time zone');
    const name = spec.slice(spec.indexOf('=') + 1, space);
    try {
      zone = loadZone(name);
    } catch {
      throw new CronParseError(`provided bad location ${name}`);
    }
    spec = spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    if (spec.startsWith('@every ')) {
      let nanos: bigint;
      try {
        nanos = parseGoDuration(spec.slice('@every '.length));
      } catch {
        throw new CronParseError(`failed to parse duration ${spec}`);
      }
      // robfig's Every(): at least one second, whole seconds only.
      const seconds = nanos < 1_000_000_000n ? 1 : Number(nanos / 1_000_000_000n);
      return { kind: 'every', delaySec: seconds };
    }
    const d = DESCRIPTORS[spec];
    if (!d) throw new CronParseError(`unrecognized descriptor: ${spec}`);
    return {
      kind: 'spec',
      minute: fixed(MINUTES, d[0]),
      hour: fixed(HOURS, d[1]),
      dom: fixed(DOM, d[2]),
      month: fixed(MONTHS, d[3]),
      dow: fixed(DOW, d[4]),
      zone,
    };
  }
  const fields = spec.split(/\s+/).filter((x) => x.length > 0);
  if (fields.length !== 5)
    throw new CronParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  return {
    kind: 'spec',
    minute: parseField(fields[0], MINUTES),
    hour: parseField(fields[1], HOURS),
    dom: parseField(fields[2], DOM),
    month: parseField(fields[3], MONTHS),
    dow: parseField(fields[4], DOW),
    zone,
  };
}

function dayMatches(s: SpecSchedule, day: number, weekday: number): boolean {
  const domMatch = !!s.dom.bits[day];
  const dowMatch = !!s.dow.bits[weekday];
  if (s.dom.star || s.dow.star) return domMatch && dowMatch;
  return domMatch || dowMatch;
}

/** robfig's SpecSchedule.Next in epoch seconds, walking wall-clock fields of the zone. */
// eslint-disable-next-line max-lines-per-function -- robfig/cron's SpecSchedule.Next (the real server's cron) ported loop for loop, kept in that shape to be read against it
function specNext(s: SpecSchedule, afterSec: number): number | undefined {
  const z = s.zone;
  let t = afterSec + 1;
  let added = false;
  const yearLimit = localFields(z, t).year + 5;
  for (;;) {
    let f = localFields(z, t);
    if (f.year > yearLimit) return undefined;
    let wrapped = false;
    while (!s.month.bits[f.month]) {
      if (!added) {
        added = true;
        t = goDate(z, f.year, f.month, 1, 0, 0, 0);
        f = localFields(z, t);
      }
      t = goDate(z, f.year, f.month + 1, f.day, f.hour, f.minute, f.second);
      f = localFields(z, t);
      if (f.month === 1) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!dayMatches(s, f.day, f.weekday)) {
      if (!added) {
        added = true;
        t = goDate(z, f.year, f.month, f.day, 0, 0, 0);
        f = localFields(z, t);
      }
      t = goDate(z, f.year, f.month, f.day + 1, f.hour, f.minute, f.second);
      f = localFields(z, t);
      // A DST change can leave the day's start off midnight: nudge it back.
      if (f.hour !== 0) {
        t += f.hour > 12 ? (24 - f.hour) * 3600 : -f.hour * 3600;
        f = localFields(z, t);
      }
      if (f.day === 1) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!s.hour.bits[f.hour]) {
      if (!added) {
        added = true;
        t = goDate(z, f.year, f.month, f.day, f.hour, 0, 0);
      }
      t += 3600;
      f = localFields(z, t);
      if (f.hour === 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!s.minute.bits[f.minute]) {
      if (!added) {
        added = true;
        t -= ((t % 60) + 60) % 60;
      }
      t += 60;
      f = localFields(z, t);
      if (f.minute === 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    // The standard parser's seconds field is always "0".
    while (f.second !== 0) {
      added = true;
      t += 1;
      f = localFields(z, t);
      if (f.second === 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    return t;
  }
}

/** The schedule's next time strictly after `afterMs` (epoch ms), or undefined within five years. */
export function cronNext(s: CronSchedule, afterMs: number): number | undefined {
  const afterSec = Math.floor(afterMs / 1000);
  if (s.kind === 'every') return (afterSec + s.delaySec) * 1000;
  const next = specNext(s, afterSec);
  return next === undefined ? undefined : next * 1000;
}

/** Validates like the frontend: parseable, and satisfiable from now. */
export function validateCron(cron: string, nowMs: number): void {
  let s: CronSchedule;
  try {
    s = parseCron(cron);
  } catch {
    throw invalidArgument('invalid CronSchedule.');
  }
  if (cronNext(s, nowMs) === undefined)
    throw invalidArgument('invalid CronSchedule, no time can be found to satisfy the schedule');
}

/**
 * Backoff before the next run of a cron chain (the server's GetBackoffForNextSchedule):
 * the first schedule time after `scheduledMs` that is not before `nowMs`, as a whole
 * number of seconds from now. Undefined when the schedule has no next time.
 */
export function cronBackoffMs(cron: string, scheduledMs: number, nowMs: number): number | undefined {
  let s: CronSchedule;
  try {
    s = parseCron(cron);
  } catch {
    return undefined;
  }
  let next: number | undefined;
  if (nowMs < scheduledMs) next = scheduledMs;
  else {
    next = cronNext(s, scheduledMs);
    while (next !== undefined && next < nowMs) next = cronNext(s, next);
  }
  if (next === undefined) return undefined;
  return Math.ceil((next - nowMs) / 1000) * 1000;
}
