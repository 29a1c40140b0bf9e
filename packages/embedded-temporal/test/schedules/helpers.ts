// Shared helpers for the schedule-spec tests: ISO strings in, ISO strings out,
// so tables read like the calendar they describe.
import { compileScheduleSpec, ScheduleSpecInput } from '../../src/schedules/spec';

export const ms = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad ISO time in test: ${iso}`);
  return t;
};

export const iso = (t: number | undefined): string | undefined =>
  t === undefined ? undefined : new Date(t).toISOString();

/** The next `count` nominal times after `fromIso`, each found from the previous one, as the scheduler walks. */
export function sequence(spec: ScheduleSpecInput, fromIso: string, count: number): (string | undefined)[] {
  const compiled = compileScheduleSpec(spec);
  const out: (string | undefined)[] = [];
  let t: number | undefined = ms(fromIso);
  for (let i = 0; i < count && t !== undefined; i++) {
    t = compiled.nextNominal(t);
    out.push(iso(t));
  }
  return out;
}

export const cron = (...cronString: string[]): ScheduleSpecInput => ({ cronString });

/** A Timestamp/Duration message as protobufjs would decode it. */
export const ts = (isoTime: string) => ({ seconds: Math.floor(ms(isoTime) / 1000), nanos: 0 });
export const dur = (seconds: number, nanos = 0) => ({ seconds, nanos });
