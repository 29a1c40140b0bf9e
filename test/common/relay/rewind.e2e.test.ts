// A rewind on the relay against a real (private) redis-server (src/common/relay/rewind.ts): the
// task's stream goes on in a new epoch after agent_rewound; the abandoned branch's events stay,
// read back marked superseded by a subscriber that was there before the rewind and by one that
// comes after; a producer of the earlier epoch (a call still running) is refused; the earlier
// epoch's end no longer stops the stream, the new epoch's does. (A reader that had the superseded
// events before the rewind learns which they were from agent_rewound.)
import pino from 'pino';
import { END_PRODUCER, EventPublisher } from '../../../src/common/relay/publisher';
import { EventSubscriber } from '../../../src/common/relay/subscriber';
import type { AgentEvent, AgentEventBody } from '../../../src/common/relay/events';
import { waitUntil } from '../../support/wait-until';
import { PrivateRedis, startPrivateRedis } from './private-redis';

let server: PrivateRedis;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  server = await startPrivateRedis();
});
afterAll(async () => {
  await server?.stop();
});

const resp = (content: string): AgentEventBody => ({ type: 'agent_response', content });
const completed: AgentEventBody = { type: 'agent_completed' };

/** Every event a subscriber from seq 0 gets, until `n` of them. */
async function readAll(s: EventSubscriber, taskId: string, n: number): Promise<AgentEvent[]> {
  const got: AgentEvent[] = [];
  const sub = await s.subscribe(
    taskId,
    0,
    (e) => got.push(e),
    (err) => {
      throw err;
    },
  );
  await waitUntil(
    `${n} events of ${taskId}`,
    () => got.length,
    (k) => k >= n,
  );
  sub.close();
  return got;
}

test('epochs: the abandoned branch is superseded, its late producers refused, its end no longer the end; a reader from before follows it live', async () => {
  const p = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  const s = new EventSubscriber(server.redis, server.client(), logger);
  await p.publish('t', 's', 's1', 0, [resp('turn 1')]);
  await p.publish('t', 's', 's2', 0, [resp('turn 2'), resp('turn 2, more')]);
  await p.publish('t', 's', END_PRODUCER, 0, [completed]);
  // A reader from before the rewind, following live.
  const live: AgentEvent[] = [];
  const following = await s.subscribe(
    't',
    0,
    (e) => live.push(e),
    (err) => {
      throw err;
    },
  );
  await waitUntil(
    'the first branch read',
    () => live.length,
    (n) => n === 4,
  );

  const r = await p.rewind({ taskId: 't', session: 's' }, { epoch: 1, fromSeq: 2, step: 2, runId: 'run-2' });
  expect(r).toEqual({ seq: 5, superseded: { from_seq: 2, to_seq: 4 } });
  expect(await p.epochPrefix('t')).toBe('r1:');
  // A call of the abandoned branch still running publishes nothing more; the new branch does.
  expect(await p.publish('t', 's', 's2:t0', 0, [resp('late')])).toMatchObject({ added: 0 });
  expect(await p.publish('t', 's', 'r1:s2', 0, [resp('turn 2 again')])).toMatchObject({ added: 1, lastSeq: 6 });
  expect(await p.publish('t', 's', 'r1:end', 0, [completed])).toMatchObject({ added: 1, lastSeq: 7 });
  expect(await p.publish('t', 's', 'r1:s3', 0, [resp('after the end')])).toMatchObject({ added: 0 });

  await waitUntil(
    'the new branch read live',
    () => live.length,
    (n) => n === 7,
  );
  following.close();
  const after = await readAll(s, 't', 7);
  const shape = (got: AgentEvent[]) => got.map((e) => [e.seq, e.type, e.superseded ?? false]);
  expect(shape(after)).toEqual([
    [1, 'agent_response', false],
    [2, 'agent_response', true],
    [3, 'agent_response', true],
    [4, 'agent_completed', true],
    [5, 'agent_rewound', false],
    [6, 'agent_response', false],
    [7, 'agent_completed', false],
  ]);
  // The live reader had 2-4 before they were superseded: agent_rewound tells it which they were.
  expect(shape(live)).toEqual(shape(after).map(([seq, type]) => [seq, type, false]));
  for (const got of [live, after])
    expect(got[4]).toMatchObject({ step: 2, run_id: 'run-2', superseded_seqs: { from_seq: 2, to_seq: 4 } });

  // A second rewind, to before everything of the first branch's turn 1: both ranges are read back.
  const again = await p.rewind({ taskId: 't', session: 's' }, { epoch: 2, fromSeq: 6, step: 2, runId: 'run-3' });
  expect(again).toEqual({ seq: 8, superseded: { from_seq: 6, to_seq: 7 } });
  const third = await readAll(s, 't', 8);
  expect(third.filter((e) => e.superseded).map((e) => e.seq)).toEqual([2, 3, 4, 6, 7]);
});

test('a rewind with nothing to supersede (the turn had published nothing yet) says so', async () => {
  const p = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  await p.publish('u', 's', 's1', 0, [resp('turn 1')]);
  expect(await p.rewind({ taskId: 'u', session: 's' }, { epoch: 1, fromSeq: 2, step: 2, runId: 'r' })).toEqual({
    seq: 2,
    superseded: null,
  });
});
