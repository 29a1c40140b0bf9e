// The relay split of the bench report: which tokens count as written near a task start, and the per-hop figures of each side.
import { splitByStart, TokenTiming } from '../../bench/relay';

describe('splitByStart', () => {
  const tokens: TokenTiming[] = [
    { emitted: 90, ms: 9, workerMs: 6, gatewayMs: 3 }, // before any start
    { emitted: 100, ms: 8, workerMs: 5, gatewayMs: 3 }, // at a start
    { emitted: 350, ms: 7 }, // 250 after the start at 100: still near; not seen by the watcher
    { emitted: 351, ms: 1, workerMs: 0.5, gatewayMs: 0.5 }, // 251 after it: far
    { emitted: 1000, ms: 2, workerMs: 1, gatewayMs: 1 }, // 100 after the start at 900
  ];

  test('a token is near when a start came at most the window before it', () => {
    const s = splitByStart(8, tokens, [900, 100, 5000], 250);
    expect(s.streams).toBe(8);
    expect(s.nearStart.total.count).toBe(3);
    expect(s.otherwise.total.count).toBe(2);
    expect(s.nearStart.total.p99).toBe(8);
    expect(s.otherwise.total.p99).toBe(9);
  });

  test('hop figures count only the tokens the watcher saw', () => {
    const s = splitByStart(8, tokens, [100, 900], 250);
    expect(s.nearStart.workerHop.count).toBe(2);
    expect(s.nearStart.workerHop.p99).toBe(5);
    expect(s.nearStart.gatewayHop.p99).toBe(3);
    expect(s.otherwise.workerHop.count).toBe(2);
  });

  test('with no starts every token is "other"', () => {
    const s = splitByStart(1, tokens, [], 250);
    expect(s.nearStart.total.count).toBe(0);
    expect(s.otherwise.total.count).toBe(tokens.length);
  });
});
