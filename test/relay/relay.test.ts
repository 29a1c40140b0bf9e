// The relay against a real (private) redis-server: a re-published seq is
// refused, late subscribers catch up, live events arrive once and in order.
import Redis from 'ioredis';
import pino from 'pino';
import { waitFor } from '../../src/launcher/processes';
import { EventPublisher } from '../../src/relay/publisher';
import { EventSubscriber } from '../../src/relay/subscriber';
import type { AgentEvent } from '../../src/relay/events';
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

const ev = (taskId: string, seq: number, content = `t${seq}`): AgentEvent => ({ type: 'agent_response', content, session: 's', task_id: taskId, seq });

test('re-published seqs are refused: a retried publisher cannot duplicate', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  expect(await p.publish('t1', [ev('t1', 1), ev('t1', 2)])).toBe(2);
  expect(await p.publish('t1', [ev('t1', 2, 'again'), ev('t1', 3)])).toBe(1);
  const all = await p.readAfter('t1', 0);
  expect(all.map((e) => [e.seq, (e as { content: string }).content])).toEqual([
    [1, 't1'],
    [2, 't2'],
    [3, 't3'],
  ]);
  expect(await p.readAfter('t1', 2)).toHaveLength(1);
  expect(await redis.pttl('aes:ev:{t1}')).toBeGreaterThan(50_000);
});

test('a subscriber gets the backlog after its resume point, then live events, each once and in order', async () => {
  const p = new EventPublisher({ redis, logger, ttlMs: 60_000 });
  const s = new EventSubscriber(redis, sub, logger);
  await p.publish('t2', [1, 2, 3, 4].map((n) => ev('t2', n)));
  const got: number[] = [];
  const subscription = await s.subscribe('t2', 2, (e) => got.push(e.seq), (err) => {
    throw err;
  });
  // Live events race the catch-up read.
  for (let n = 5; n <= 40; n++) await p.publish('t2', [ev('t2', n)]);
  await waitFor('all events', undefined, () => got.length === 38, 5000);
  expect(got).toEqual(Array.from({ length: 38 }, (_, i) => i + 3));
  subscription.close();
  expect(s.activeTasks).toBe(0);
});

test('a publisher whose Redis is down drops events without failing the task', async () => {
  const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  dead.on('error', () => undefined);
  const p = new EventPublisher({ redis: dead, logger, ttlMs: 1000 });
  await expect(p.publish('t3', [ev('t3', 1)])).resolves.toBe(0);
  dead.disconnect();
});
