// The relay against a real (private) redis-server: it numbers the events of
// concurrent producers gap-free, a retried producer adds nothing twice, late
// subscribers catch up, live events arrive once and in order.
import Redis from 'ioredis';
import pino from 'pino';
import { waitUntil } from '../../support/wait-until';
import { END_PRODUCER, EventPublisher } from '../../../src/common/relay/publisher';
import { EventSubscriber } from '../../../src/common/relay/subscriber';
import type { AgentEventBody } from '../../../src/common/relay/events';
import { PrivateRedis, startPrivateRedis } from './private-redis';

let server: PrivateRedis;
let redis: Redis;
let sub: Redis;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  server = await startPrivateRedis();
  redis = server.redis;
  sub = server.client();
});
afterAll(async () => {
  await server?.stop();
});

const resp = (content: string): AgentEventBody => ({ type: 'agent_response', content });

test('the relay numbers events gap-free; a producer retried from its start adds only what it had not published', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  expect(await p.publish('t1', 's', 'a', 0, [resp('a0'), resp('a1')])).toEqual({ added: 2, lastSeq: 2, lost: false });
  // Two producers at once: each gets the next seqs as its events land.
  const [b, c] = await Promise.all([
    p.publish('t1', 's', 'b', 0, [resp('b0')]),
    p.publish('t1', 's', 'c', 0, [resp('c0')]),
  ]);
  expect([b.lastSeq, c.lastSeq].sort()).toEqual([3, 4]);
  // A retry of `a` from 0 with one more event: only the new one is appended.
  expect(await p.publish('t1', 's', 'a', 0, [resp('again'), resp('again'), resp('a2')])).toEqual({
    added: 1,
    lastSeq: 5,
    lost: false,
  });
  const all = await p.readAfter('t1', 0);
  expect(all.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  expect(all.map((e) => (e as { content: string }).content).filter((t) => t.startsWith('a'))).toEqual([
    'a0',
    'a1',
    'a2',
  ]);
  expect(all[0]).toEqual({ seq: 1, type: 'agent_response', content: 'a0', session: 's', task_id: 't1' });
  expect(await redis.pttl('aes:ev:{t1}')).toBeGreaterThan(50_000);
  // What the producer published, and its meta, for its retry.
  await p.publish('t1', 's', 'a', 3, [], { meta: { usage: 1 } });
  const state = await p.producerState('t1', 'a');
  expect(state.count).toBe(3);
  expect(state.events.map((e) => e.seq)).toEqual([1, 2, 5]);
  expect(state.meta).toEqual({ usage: 1 });
});

test("after the end producer's terminal event nothing else is appended; a repeated end is skipped", async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  await p.publish('t4', 's', 's1', 0, [resp('x')]);
  await p.publish('t4', 's', END_PRODUCER, 0, [{ type: 'agent_completed' }]);
  expect((await p.publish('t4', 's', 's1:t0', 0, [resp('late')])).added).toBe(0);
  expect((await p.publish('t4', 's', END_PRODUCER, 0, [{ type: 'agent_completed' }])).added).toBe(0);
  expect((await p.readAfter('t4', 0)).map((e) => e.type)).toEqual(['agent_response', 'agent_completed']);
  // The last event is the end (what the gateway reads to end a stream resumed at or past it).
  expect(await p.lastEvent('t4')).toMatchObject({ seq: 2, type: 'agent_completed' });
  expect(await p.lastEvent('t-none')).toBeUndefined();
});

test('numbering never goes back below the floor the workflow knows (Redis lost the task), and the publish says events were lost', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  expect(await p.publish('t5', 's', 's9', 0, [resp('x')], { floor: 41 })).toEqual({
    added: 1,
    lastSeq: 42,
    lost: true,
  });
  expect(await p.publish('t5', 's', 's9', 1, [resp('y')], { floor: 42 })).toEqual({
    added: 1,
    lastSeq: 43,
    lost: false,
  });
});

test('a producer whose earlier events are not in (dropped while Redis was down) is told they were lost; later ones publish on', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  await p.publish('t6', 's', 'a', 0, [resp('a0')]);
  // Events 1 and 2 of `a` never reached Redis: the next publish starts at 3.
  expect(await p.publish('t6', 's', 'a', 3, [resp('a3')], { floor: 1 })).toEqual({ added: 1, lastSeq: 2, lost: true });
  expect(await p.publish('t6', 's', 'a', 4, [resp('a4')], { floor: 2 })).toEqual({ added: 1, lastSeq: 3, lost: false });
});

test('a subscriber gets the backlog after its resume point, then live events, each once and in order', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  const s = new EventSubscriber(redis, sub, logger);
  await p.publish(
    't2',
    's',
    'a',
    0,
    [1, 2, 3, 4].map((n) => resp(`t${n}`)),
  );
  const got: number[] = [];
  const subscription = await s.subscribe(
    't2',
    2,
    (e) => got.push(e.seq),
    (err) => {
      throw err;
    },
  );
  // Live events race the catch-up read.
  for (let n = 5; n <= 40; n++) await p.publish('t2', 's', 'a', n - 1, [resp(`t${n}`)]);
  await waitUntil(
    'the 38 events after the resume point',
    () => got.length,
    (n) => n === 38,
  );
  expect(got).toEqual(Array.from({ length: 38 }, (_, i) => i + 3));
  subscription.close();
  expect(s.activeTasks).toBe(0);
});

test('a publisher whose Redis is down drops events without failing the task, and says they were lost', async () => {
  const dead = new Redis('redis://127.0.0.1:1', {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  dead.on('error', () => undefined);
  const p = new EventPublisher({ redis: dead, logger, ttlMs: 1000 });
  await expect(p.publish('t3', 's', 'a', 0, [resp('x')], { floor: 7 })).resolves.toEqual({
    added: 0,
    lastSeq: 7,
    lost: true,
  });
  expect(await p.readAll('t3')).toBeUndefined();
  dead.disconnect();
});
