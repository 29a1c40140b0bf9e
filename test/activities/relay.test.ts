// The relay activities against a real Redis: a run's final events after a
// failed model turn go after whatever that turn published, once.
import pino from 'pino';
import { createRelayActivities } from '../../activities/relay';
import { EventPublisher } from '../../src/relay/publisher';
import { StatusCache } from '../../src/relay/status-cache';
import { PrivateRedis, startPrivateRedis } from '../relay/private-redis';

const logger = pino({ level: 'silent' });
let server: PrivateRedis;
let publisher: EventPublisher;
let relay: ReturnType<typeof createRelayActivities>;

beforeAll(async () => {
  server = await startPrivateRedis();
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  relay = createRelayActivities({ publisher, statusCache: new StatusCache(server.redis, logger, 60_000), config: { MODEL_PRICES: {} } } as never);
});
afterAll(async () => {
  await server?.stop();
});

const base = { session: 's', events: [{ type: 'agent_error', error: { type: 'x', message: 'failed' } }] };

test('append numbers the final events after those a failed turn published, and a retry adds nothing', async () => {
  const taskId = 'task_append1';
  // The workflow knows seq 1 (agent_started); the failed turn went on to seq 4.
  await publisher.publish(taskId, [1, 2, 3, 4].map((seq) => ({ type: 'agent_response', content: `t${seq}`, session: 's', task_id: taskId, seq })));
  expect(await relay.publishEvents({ ...base, taskId, seqStart: 2, append: true })).toBe(6);
  expect(await relay.publishEvents({ ...base, taskId, seqStart: 2, append: true })).toBe(6);
  const all = await publisher.readAfter(taskId, 0);
  expect(all.map((e) => [e.seq, e.type])).toEqual([
    [1, 'agent_response'],
    [2, 'agent_response'],
    [3, 'agent_response'],
    [4, 'agent_response'],
    [5, 'agent_error'],
  ]);
});

test('without append, events take the seqs the workflow gives them (a repeat is refused)', async () => {
  const taskId = 'task_append2';
  await publisher.publish(taskId, [{ type: 'agent_started', session: 's', task_id: taskId, seq: 1 }]);
  expect(await relay.publishEvents({ ...base, taskId, seqStart: 1 })).toBe(2);
  expect((await publisher.readAfter(taskId, 0)).map((e) => e.type)).toEqual(['agent_started']);
});
