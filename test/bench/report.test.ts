// Targets stated against a floor: the row's target is FLOOR_RATIO times the floor's p99, and the
// floor table prints floor, value, ratio, target and whether it was met.
import { summarize } from '../../bench/measure';
import { FLOOR_RATIO, floorTable, judgeAgainstFloor, Row } from '../../bench/report';

const row = (label: string, samples: number[]): Row => ({ label, concurrency: '1', s: summarize(samples), errors: 0 });

describe('bench report: targets against floors', () => {
  it('sets the target to FLOOR_RATIO x the floor p99', () => {
    const judged = judgeAgainstFloor(row('calls', [10, 20, 30]), row('floor', [4, 8, 12]));
    expect(FLOOR_RATIO).toBe(1.5);
    expect(judged.targetP99).toBe(18);
    expect(judged.floor?.label).toBe('floor');
  });

  it('has no target when the floor has no samples', () => {
    expect(judgeAgainstFloor(row('calls', [10]), row('floor', [])).targetP99).toBeUndefined();
  });

  it('prints floor, value, ratio, target and verdict for each judged row, and nothing without one', () => {
    const met = judgeAgainstFloor(row('mcp', [10, 15]), row('mcp floor', [10, 12]));
    const missed = judgeAgainstFloor(row('dag', [40]), row('dag floor', [10]));
    const lines = floorTable([met, met.floor!, missed, missed.floor!, row('other', [1])], 'embedded');
    expect(lines[1]).toMatch(/same engine \(embedded\)/);
    const text = lines.join('\n');
    expect(text).toMatch(/mcp\s+mcp floor\s+12\.0\s+15\.0\s+1\.25x\s+<= 1\.5x\s+met/);
    expect(text).toMatch(/dag\s+dag floor\s+10\.0\s+40\.0\s+4\.00x\s+<= 1\.5x\s+not met/);
    expect(text).not.toMatch(/other/);
    expect(floorTable([row('other', [1])], 'embedded')).toEqual([]);
  });
});
