// The relay's lag and the SSE client count, as the subscriber measures them:
// a live message carries its publish time (`<ms> <JSON>`), the lag is taken
// when the event is written to a client, and a bare JSON message still
// delivers (without a time). Redis is a stand-in here (test/relay has the
// real one).
import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import pino from 'pino';
import { EventSubscriber } from '../../../src/common/relay/subscriber';
import { keys } from '../../../src/common/relay/keys';
import type { AgentEvent } from '../../../src/common/relay/events';

function fakeRedis() {
  // No events to catch up on, and no rewind ever superseded any (no 'sup' field).
  const redis = { xrange: async () => [], hget: async () => null } as unknown as Redis;
  const sub = Object.assign(new EventEmitter(), {
    subscribe: async () => 1,
    unsubscribe: async () => 1,
  }) as unknown as Redis;
  return { redis, sub };
}

const body = (seq: number, type = 'agent_response') =>
  JSON.stringify({ seq, type, content: 'x', session: 's', task_id: 't1' });
const flush = () => new Promise((r) => setImmediate(r));

test('a live event is written to each client and its lag observed; the client count follows subscriptions', async () => {
  const { redis, sub } = fakeRedis();
  const lags: number[] = [];
  const s = new EventSubscriber(redis, sub, pino({ level: 'silent' }), (sec) => lags.push(sec));
  const got: AgentEvent[][] = [[], []];
  const subs = await Promise.all(
    got.map((g) =>
      s.subscribe(
        't1',
        0,
        (e) => g.push(e),
        () => undefined,
      ),
    ),
  );
  expect(s.clients).toBe(2);
  await flush();
  sub.emit('message', keys.channel('t1'), `${Date.now() - 40} ${body(1)}`);
  await flush();
  expect(got.map((g) => g.map((e) => e.seq))).toEqual([[1], [1]]);
  // What the client gets is the event alone, without the time.
  expect(got[0][0]).toEqual(JSON.parse(body(1)));
  expect(lags).toHaveLength(2);
  for (const lag of lags) expect(lag).toBeGreaterThanOrEqual(0.04);
  for (const lag of lags) expect(lag).toBeLessThan(5);
  // A bare JSON message (an older publisher) is delivered without a lag.
  sub.emit('message', keys.channel('t1'), body(2));
  await flush();
  expect(got[0].map((e) => e.seq)).toEqual([1, 2]);
  expect(lags).toHaveLength(2); // no more than before
  subs[0].close();
  subs[0].close(); // closing twice counts once
  expect(s.clients).toBe(1);
  subs[1].close();
  expect(s.clients).toBe(0);
});

test("the terminal event's lag is observed too, although delivering it closes the stream", async () => {
  const { redis, sub } = fakeRedis();
  const lags: number[] = [];
  const s = new EventSubscriber(redis, sub, pino({ level: 'silent' }), (sec) => lags.push(sec));
  const h = await s.subscribe(
    't1',
    0,
    (e) => e.type === 'agent_completed' && h.close(),
    () => undefined,
  );
  await flush();
  sub.emit('message', keys.channel('t1'), `${Date.now()} ${body(1, 'agent_completed')}`);
  await flush();
  expect([lags.length, s.clients]).toEqual([1, 0]);
});
