// The bench's options: the relay hop split is opt-in; the other flags parse as before.
import { parseOptions } from '../../bench/options';

describe('bench options', () => {
  it('leaves the relay hop split off unless asked for (its observer adds load to the relay row)', () => {
    expect(parseOptions([], {}).relayHops).toBe(false);
    expect(parseOptions(['--relay-hops'], {}).relayHops).toBe(true);
    expect(parseOptions(['--relay-hops=false'], {}).relayHops).toBe(false);
    expect(parseOptions([], { BENCH_RELAY_HOPS: '1' }).relayHops).toBe(true);
    expect(parseOptions(['--relay-hops=false'], { BENCH_RELAY_HOPS: '1' }).relayHops).toBe(false);
  });

  it('keeps the other switches and sizes as given', () => {
    const o = parseOptions(['--persist', '--concurrency', '8,1', '--relay-tasks=100', '--phases', 'relay'], {});
    expect(o.persist).toBe(true);
    expect(o.concurrency).toEqual([1, 8]);
    expect(o.relayTasks).toBe(100);
    expect([...o.phases]).toEqual(['relay']);
    expect(o.relayHops).toBe(false);
  });

  it('refuses what it does not know', () => {
    expect(() => parseOptions(['--relay-hop'], {})).toThrow(/unknown argument --relay-hop/);
    expect(() => parseOptions(['--phases', 'relay,nope'], {})).toThrow(/unknown phase nope/);
  });
});
