// The floors' samples: a tool call is the two activity hand-offs around the tool, an activity round
// one of them, a chain link the time from one child's close to the next child's activity.
import { chainSamples, roundSamples, toolCallSamples } from '../../bench/dag';

describe('bench floors', () => {
  it('times each tool call as (tool start - turn end) + (next turn start - tool end)', () => {
    // turn, tool, turn, tool, turn: [started, returned], ms
    const steps: [number, number][] = [
      [0, 1],
      [5, 6],
      [9, 9],
      [20, 21],
      [30, 31],
    ];
    expect(toolCallSamples(steps)).toEqual([4 + 3, 11 + 9]);
  });

  it('leaves out a call whose next turn never ran', () => {
    expect(
      toolCallSamples([
        [0, 1],
        [5, 6],
      ]),
    ).toEqual([]);
    expect(toolCallSamples([])).toEqual([]);
  });

  it('times each activity round as the next start - the previous return', () => {
    expect(
      roundSamples([
        [0, 1],
        [5, 6],
        [9, 9],
      ]),
    ).toEqual([4, 3]);
    expect(roundSamples([[0, 1]])).toEqual([]);
  });

  it('times each link after the first from the previous child close', () => {
    expect(chainSamples([100, 130, 170], [110, 150, 190])).toEqual([20, 20]);
    expect(chainSamples([100], [110])).toEqual([]);
  });
});
