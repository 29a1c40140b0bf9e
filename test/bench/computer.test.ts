// The computer phase: the stamp `date +%s%N` prints, the pace of the bare spawns, the target's
// floor (the sum of two p99s), and the phase's place among the options.
import { medianInterval, stampMs, sumFloor } from '../../bench/computer';
import { parseOptions } from '../../bench/main';
import { FLOOR_RATIO, judgeAgainstFloor, rowOf } from '../../bench/report';

describe('bench computer phase', () => {
  it('reads the stamp of date +%s%N in a bash result, to the microsecond', () => {
    const text = 'exit code: 0\nduration: 12 ms\nstdout:\n1764412345123456789\nstderr: (empty)';
    expect(stampMs(text)).toBe(1764412345123.456);
    expect(stampMs('1764412345123456789\n')).toBe(1764412345123.456);
    expect(stampMs('exit code: 0\nstdout: (empty)')).toBeUndefined();
    expect(stampMs('id 17644123451234567890')).toBeUndefined();
  });

  it('paces the bare spawns at the median interval between process starts', () => {
    expect(medianInterval([0, 40, 70, 130])).toBe(40);
    expect(Number.isNaN(medianInterval([5]))).toBe(true);
  });

  it('judges the calls against 1.5 x (bare sandbox p99 + one activity round p99)', () => {
    const spawn = rowOf('spawn', '1', [10, 20]);
    const round = rowOf('round', '1', [5, 6, 7]);
    const floor = sumFloor(spawn, round);
    expect(floor.s.p99).toBe(27);
    expect(floor.s.count).toBe(2);
    expect(judgeAgainstFloor(rowOf('calls', '1', [30]), floor).targetP99).toBe(FLOOR_RATIO * 27);
  });

  it('is a default phase, selectable alone, with its call count', () => {
    expect(parseOptions([], {}).phases.has('computer')).toBe(true);
    const o = parseOptions(['--phases', 'computer', '--computer-calls=40'], {});
    expect([...o.phases]).toEqual(['computer']);
    expect(o.computerCalls).toBe(40);
    expect(parseOptions([], {}).computerCalls).toBe(200);
  });
});
