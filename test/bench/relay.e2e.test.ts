// The relay rows' baseline really relays: every token the scripted model writes
// reaches the right SSE client through its two processes and a real Redis, in
// order, and the bench's relay measurement times each of them.
import { performance } from 'node:perf_hooks';
import { startScriptedModel, ScriptedModel } from '../../src/dev/scripted-model';
import { openSse, target } from '../../bench/measure';
import { measureRelayRow, RELAY_TOKEN, startBareRelay, BareRelay, type RelayWatcher } from '../../bench/relay';
import { startPrivateRedis, PrivateRedis } from '../common/relay/private-redis';

jest.setTimeout(60_000);

let redis: PrivateRedis;
let model: ScriptedModel;
let bare: BareRelay;
const emittedAt = new Map<string, number>();

beforeAll(async () => {
  redis = await startPrivateRedis();
  model = await startScriptedModel({
    onTokenWritten: (delta) => {
      const k = typeof delta.content === 'string' ? delta.content.trim() : '';
      if (RELAY_TOKEN.test(k)) emittedAt.set(k, performance.now());
    },
  });
  bare = await startBareRelay(redis.url, model.url, process.env);
});

afterAll(async () => {
  await bare?.stop();
  await model?.close();
  await redis?.stop();
});

async function stream(message: string): Promise<string[]> {
  const got: string[] = [];
  const t = target(bare.url, null, 4);
  try {
    const s = await openSse(t, 'POST', '/', { message }, (ev) => {
      if (ev.data?.type === 'agent_response') got.push(String(ev.data.content));
    });
    expect(s.status).toBe(200);
    await s.done;
    return got;
  } finally {
    t.agent.destroy();
  }
}

describe('bare relay (bench baseline)', () => {
  it('streams each reply to its own client, in order, and ends the stream with the reply', async () => {
    const [a, b] = await Promise.all([
      stream('[[say text="a1 a2 a3 a4"]] [[slow delay=5]]'),
      stream('[[say text="b1 b2 b3"]] [[slow delay=7]]'),
    ]);
    expect(a.join('').split(/\s+/).filter(Boolean)).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(b.join('').split(/\s+/).filter(Boolean)).toEqual(['b1', 'b2', 'b3']);
  });

  it('is timed by the relay measurement token by token, like the service', async () => {
    let n = 0;
    const api = target(bare.url, null, 2);
    const r = await measureRelayRow({
      api,
      streams: 2,
      tasks: 3,
      opts: { relayTokens: 5, relayDelayMs: 5, relayHops: false },
      emittedAt,
      watcher: {} as RelayWatcher, // only used with relayHops
      nextToken: () => `z${(n++).toString(36).padStart(5, '0')}`,
      left: () => 60_000,
    });
    api.agent.destroy();
    expect(r.errors).toBe(0);
    expect(r.tokens).toHaveLength(15);
    for (const t of r.tokens) expect(t.ms).toBeGreaterThanOrEqual(0);
  });

  it('stops both of its processes', async () => {
    const other = await startBareRelay(redis.url, model.url, process.env);
    await other.stop();
    expect(other.children).toHaveLength(2);
    for (const c of other.children) expect(c.exitCode !== null || c.signalCode !== null).toBe(true);
  });
});
