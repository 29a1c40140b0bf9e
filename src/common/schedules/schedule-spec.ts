// A run request's `schedules` entries (SPEC 2.5) read into what a Temporal
// Schedule needs: a number is seconds from now (one run), an ISO 8601
// date-time with its zone is one run at that instant, a five-field cron string
// is a recurring schedule in `timezone` (IANA, default UTC). Each problem is an
// issue naming the entry and the field, for the 400.

export type ScheduleWhen = { kind: 'once'; at: Date } | { kind: 'cron'; cron: string; timezone: string };

export interface ScheduleIssue {
  path: string;
  message: string;
  code: string;
}

export interface ScheduleEntry {
  schedule: number | string;
  timezone?: string;
}

/** An entry's time, or the issues that make it unusable. `now` is the request's time. */
export function readSchedule(
  entry: ScheduleEntry,
  path: string,
  now: Date,
): { when: ScheduleWhen } | { issues: ScheduleIssue[] } {
  const zoneIssue =
    entry.timezone !== undefined && !isTimeZone(entry.timezone)
      ? [
          {
            path: `${path}.timezone`,
            message: `"${entry.timezone}" is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)`,
            code: 'invalid_timezone',
          },
        ]
      : [];
  const s = entry.schedule;
  if (typeof s === 'number') {
    if (entry.timezone !== undefined)
      return {
        issues: [
          { path: `${path}.timezone`, message: 'a time zone goes with a cron schedule only', code: 'unexpected' },
        ],
      };
    return { when: { kind: 'once', at: new Date(now.getTime() + Math.round(s * 1000)) } };
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(s)) return readInstant(s, entry, `${path}.schedule`, now);
  const cronIssues = cronFieldIssues(s, `${path}.schedule`);
  const issues = [...cronIssues, ...zoneIssue];
  if (issues.length) return { issues };
  return { when: { kind: 'cron', cron: s.trim().split(/\s+/).join(' '), timezone: entry.timezone ?? 'UTC' } };
}

function readInstant(
  s: string,
  entry: ScheduleEntry,
  path: string,
  now: Date,
): { when: ScheduleWhen } | { issues: ScheduleIssue[] } {
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(s))
    return {
      issues: [
        { path, message: `"${s}" has no time zone: end it with Z or an offset like +02:00`, code: 'no_time_zone' },
      ],
    };
  const at = new Date(s);
  if (Number.isNaN(at.getTime()))
    return { issues: [{ path, message: `"${s}" is not an ISO 8601 date-time`, code: 'invalid_date' }] };
  if (at.getTime() <= now.getTime())
    return { issues: [{ path, message: `${at.toISOString()} is in the past`, code: 'past' }] };
  if (entry.timezone !== undefined)
    return {
      issues: [
        {
          path: path.replace(/\.schedule$/, '.timezone'),
          message: 'a time zone goes with a cron schedule only',
          code: 'unexpected',
        },
      ],
    };
  return { when: { kind: 'once', at } };
}

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
] as const;

/** Issues of a five-field cron string (minute hour day-of-month month day-of-week): `*`, lists, ranges, steps, month and day names. */
export function cronFieldIssues(cron: string, path: string): ScheduleIssue[] {
  const parts = cron.trim().split(/\s+/);
  if (parts.length !== 5) {
    return [
      {
        path,
        message: `"${cron}" is neither a number of seconds, an ISO 8601 date-time nor a five-field cron string (minute hour day-of-month month day-of-week); it has ${parts.length} field${parts.length === 1 ? '' : 's'}`,
        code: 'invalid_cron',
      },
    ];
  }
  const issues: ScheduleIssue[] = [];
  parts.forEach((part, i) => {
    const f = FIELDS[i];
    const bad = part.split(',').find((item) => !validItem(item, f.min, f.max, 'names' in f ? f.names : undefined));
    if (bad !== undefined)
      issues.push({
        path,
        message: `the ${f.name} field "${part}" is not valid: use *, a number ${f.min}-${f.max}${'names' in f ? ' or a name' : ''}, a range a-b, a list a,b or a step */n`,
        code: 'invalid_cron',
      });
  });
  return issues;
}

function validItem(item: string, min: number, max: number, names?: readonly string[]): boolean {
  const [range, step, ...rest] = item.split('/');
  if (rest.length || (step !== undefined && !(/^\d+$/.test(step) && Number(step) >= 1))) return false;
  if (range === '*') return true;
  const ends = range.split('-');
  if (ends.length > 2) return false;
  const values = ends.map((e) => valueOf(e, names));
  if (values.some((v) => v === undefined || v < min || v > max)) return false;
  return values.length === 1 || values[0]! <= values[1]!;
}

function valueOf(text: string, names?: readonly string[]): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const i = names?.indexOf(text.toUpperCase()) ?? -1;
  if (i < 0) return undefined;
  return names!.length === 12 ? i + 1 : i;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
