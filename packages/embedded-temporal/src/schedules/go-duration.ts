/**
 * Duration strings as the server reads `@every <interval>[/<phase>]` cron
 * entries: Go's time.ParseDuration syntax ("1h30m", "1.5h", "90s", "250ms"),
 * plus Temporal's extension that "d" means exactly 24 hours. The extension works
 * by textual rewrite before parsing ("1.5d" -> "36.000000h"); we do the same so
 * odd inputs succeed or fail exactly as they do there.
 */
import { ScheduleSpecError } from './spec-error';

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const INT64_MAX = (1n << 63n) - 1n;

/** Go's time.ParseDuration, returning nanoseconds. */
export function parseGoDuration(input: string): bigint {
  const fail = (): never => {
    throw new ScheduleSpecError(`time: invalid duration "${input}"`);
  };
  let s = input;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') fail();
  let total = 0n;
  while (s !== '') {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(s);
    const whole = m?.[1] ?? '';
    const frac = m?.[2];
    // A component needs at least one digit, before or after the dot.
    if (whole === '' && (frac === undefined || frac === '')) fail();
    s = s.slice(m![0].length);
    const unitMatch = /^[^0-9.]+/.exec(s);
    if (!unitMatch) throw new ScheduleSpecError(`time: missing unit in duration "${input}"`);
    const unitName = unitMatch[0];
    const unit = UNIT_NANOS[unitName];
    if (unit === undefined) throw new ScheduleSpecError(`time: unknown unit "${unitName}" in duration "${input}"`);
    s = s.slice(unitName.length);
    let v = BigInt(whole || '0') * unit;
    if (frac) v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > INT64_MAX) fail();
  }
  return negative ? -total : total;
}

/** Temporal's timestamp.ParseDuration: Go syntax plus "d" for 24 hours. */
export function parseTemporalDuration(input: string): bigint {
  const rewritten = input.replace(/([0-9]+(\.[0-9]*)?|(\.[0-9]+))d/g, (match) => {
    const days = Number(match.slice(0, -1));
    return Number.isFinite(days) ? `${(24 * days).toFixed(6)}h` : match;
  });
  return parseGoDuration(rewritten);
}
