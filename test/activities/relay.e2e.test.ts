// The relay activity against a real Redis: a run's end is published once,
// after its status is cached, and nothing is appended after it.
import pino from 'pino';
import { createRelayActivities } from '../../activities/relay';
import { EventPublisher } from '../../src/common/relay/publisher';
import { StatusCache } from '../../src/common/relay/status-cache';
import { PrivateRedis, startPrivateRedis } from '../common/relay/private-redis';

const logger = pino({ level: 'silent' });
let server: PrivateRedis;
let publisher: EventPublisher;
let relay: ReturnType<typeof createRelayActivities>;

beforeAll(async () => {
  server = await startPrivateRedis();
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  relay = createRelayActivities({
    publisher,
    statusCache: new StatusCache(server.redis, logger, 60_000),
    config: { MODEL_PRICES: {} },
  } as never);
});
afterAll(async () => {
  await server?.stop();
});

test('publishEnd caches the final status, then publishes the end once: a retry adds nothing, and nothing follows it', async () => {
  const taskId = 'task_end1';
  const view = {
    task_id: taskId,
    session: 's',
    account: 'a',
    status: 'completed' as const,
    progress: 1,
    current_step: '1',
    error: null,
    metadata: {},
    created_at: 'x',
    started_at: 'x',
    completed_at: 'y',
  };
  await publisher.publish(taskId, 's', 's1', 0, [{ type: 'agent_response', content: 'hi' }]);
  const input = {
    taskId,
    session: 's',
    floor: 1,
    events: [{ type: 'agent_cost' as const, cost: '0.1' }, { type: 'agent_completed' as const }],
    view,
  };
  await relay.publishEnd(input);
  await relay.publishEnd(input);
  await publisher.publish(taskId, 's', 's1:t0', 0, [{ type: 'agent_tool_response', content: '{}', tool_call_id: 'c' }]);
  expect((await publisher.readAfter(taskId, 0)).map((e) => [e.seq, e.type])).toEqual([
    [1, 'agent_response'],
    [2, 'agent_cost'],
    [3, 'agent_completed'],
  ]);
  expect(await new StatusCache(server.redis, logger, 60_000).get(taskId)).toMatchObject({ status: 'completed' });
});
