// The bench's options: the relay hop split is opt-in; the other flags parse as before; the phases
// that run without the bench's stack are opt-in and run apart.
import { parseOptions } from '../../bench/main';

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

  it('runs express and soak only when asked, and apart from the phases that need its stack', () => {
    const dflt = parseOptions([], {});
    expect(dflt.phases.has('express') || dflt.phases.has('soak')).toBe(false);
    const soak = parseOptions(['--phases', 'soak', '--url', 'http://h:1', '--soak-tasks=15'], { BENCH_KEY: 'k' });
    expect([soak.url, soak.key, soak.soakTasks, soak.soakWaves]).toEqual(['http://h:1', 'k', 15, 5]);
    expect(parseOptions(['--phases', 'express,soak'], { PORT: '9' }).url).toBe('http://127.0.0.1:9');
    expect(() => parseOptions(['--phases', 'express,relay'], {})).toThrow(/express run without the bench's stack/);
  });
});
