// Jitter: the same FarmHash-based, seed-dependent offsets as the real server
// (checked against values from Temporal's own tests), bounded by the configured
// jitter and by the gap to the next scheduled time.
import { fingerprint32 } from '../../src/schedules/farmhash32';
import { compileScheduleSpec } from '../../src/schedules/spec';
import { dur, iso, ms } from './helpers';

describe('fingerprint32', () => {
  // Reference values published with FarmHash ports (generated from the C++ code).
  test.each([
    ['a', 0x3c973d4d],
    ['abcd', 0x98b51e95],
    ['abcdefgh', 0xfd7ec8b9],
    ['abcdefghij', 0xf2669361],
    ['size:  a.out:  bad magic', 0xc6246b8d],
    ["Nepal premier won't resign.", 0x322984d9],
    ['C is as portable as Stonehedge!!', 0x221694e4],
    ['Discard medicine more than two years old.', 0xe273108f],
    [
      'The fugacity of a constituent in a mixture of gases at a given temperature is proportional to its mole fraction.  Lewis-Randall Rule',
      0x11c493bb,
    ],
  ])('%j', (input, expected) => {
    expect(fingerprint32(Buffer.from(input))).toBe(expected);
  });
});

describe('jitter', () => {
  const daily = { interval: [{ interval: dur(86_400) }], jitter: dur(3600) };

  // Expected values copied from the server's spec tests (nominal 2022-03-24T00:00Z, 1h jitter).
  test.each([
    ['', '2022-03-24T00:35:24.276Z'],
    ['seed-1', '2022-03-24T00:06:12.519Z'],
    ['seed-2', '2022-03-24T00:39:16.922Z'],
  ])('matches the real server for seed %j', (seed, expected) => {
    const spec = compileScheduleSpec(daily);
    const next = spec.nextTime(ms('2022-03-23T11:00:00Z'), seed);
    expect(iso(next?.nominalMs)).toBe('2022-03-24T00:00:00.000Z');
    expect(iso(next?.actualMs)).toBe(expected);
  });

  test('matches the real server for a single-run calendar (no following time caps it)', () => {
    const spec = compileScheduleSpec({
      calendar: [{ hour: '13', minute: '55', dayOfMonth: '7', month: '4', year: '2022' }],
      jitter: dur(3600),
    });
    const nominal = spec.nextNominal(ms('2022-03-23T11:00:00Z'))!;
    expect(iso(spec.withJitter(nominal))).toBe('2022-04-07T13:57:26.927Z');
  });

  test('stays in [0, jitter), whole milliseconds, for many times and a realistic seed', () => {
    const spec = compileScheduleSpec(daily);
    const seed = '5f1c2a9e-3b7d-4c1e-9a55-0d2f7c8b1e42-nightly-report';
    const offsets = new Set<number>();
    let t = ms('2024-01-01T00:00:00Z');
    for (let i = 0; i < 500; i++) {
      const nominal = spec.nextNominal(t)!;
      const offset = spec.withJitter(nominal, seed) - nominal;
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThan(3_600_000);
      expect(Number.isInteger(offset)).toBe(true);
      offsets.add(offset);
      t = nominal;
    }
    // Spread out, not a constant.
    expect(offsets.size).toBeGreaterThan(490);
  });

  test('is deterministic per nominal time and seed, and the seed matters', () => {
    const a = compileScheduleSpec(daily);
    const b = compileScheduleSpec(daily);
    const nominal = ms('2024-05-05T00:00:00Z');
    expect(a.withJitter(nominal, 'ns-sched')).toBe(b.withJitter(nominal, 'ns-sched'));
    expect(a.withJitter(nominal, 'ns-sched')).not.toBe(a.withJitter(nominal, 'ns-other'));
  });

  test('never reaches the following nominal time', () => {
    const spec = compileScheduleSpec({ interval: [{ interval: dur(60) }], jitter: dur(86_400) });
    let t = ms('2024-01-01T00:00:00Z');
    for (let i = 0; i < 200; i++) {
      const nominal = spec.nextNominal(t)!;
      expect(spec.withJitter(nominal, 'x') - nominal).toBeLessThan(60_000);
      t = nominal;
    }
  });

  test('the cap ignores exclusions, as on the server', () => {
    // 01:00 is excluded, yet the 00:00 action may only move by up to an hour.
    const spec = compileScheduleSpec({
      interval: [{ interval: dur(3600) }],
      excludeCalendar: [{ hour: '1' }],
      jitter: dur(10 * 3600),
    });
    for (let day = 1; day <= 28; day++) {
      const nominal = Date.UTC(2024, 1, day);
      expect(spec.withJitter(nominal, `s${day}`) - nominal).toBeLessThan(3_600_000);
    }
  });

  test.each([
    ['unset', undefined],
    ['zero', dur(0)],
    ['negative', dur(-60)],
    ['under a millisecond', dur(0, 999_999)],
  ])('%s jitter leaves the time unchanged', (_label, jitter) => {
    const spec = compileScheduleSpec({ interval: [{ interval: dur(3600) }], jitter });
    const nominal = ms('2024-01-01T05:00:00Z');
    expect(spec.withJitter(nominal, 'seed')).toBe(nominal);
  });
});
