// A rewind on the relay (POST /tasks/{id}/rewind): the task's stream goes on in a new epoch. The
// task's producers of earlier epochs are refused from now on (publisher.ts: a call of the
// abandoned branch still running publishes nothing more), the events of the abandoned branch
// (from the first seq of the turn rewound to, to the last) are recorded as superseded, and an
// agent_rewound event saying so is appended. Readers mark superseded events as they read them
// (subscriber.ts): a stream entry never changes.
import type Redis from 'ioredis';
import type { AgentEvent } from './events';
import { keys } from './keys';

// KEYS[1] stream, KEYS[2] channel, KEYS[3] producers hash. ARGV[1] ttl ms, ARGV[2] the new epoch,
// ARGV[3] the first superseded seq, ARGV[4] the event's JSON without seq and superseded, ARGV[5]
// the publish time (epoch ms). Returns {seq of agent_rewound, first superseded, last superseded}
// (0 0 when none was).
const REWIND = `
local h = KEYS[3]
local last = tonumber(redis.call('HGET', h, 'n') or '0')
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if top[1] then
  local s = tonumber(string.match(top[1][1], '^(%d+)'))
  if s > last then last = s end
end
local from = tonumber(ARGV[3])
local range = 'null'
local lo, hi = 0, 0
if from <= last then
  lo, hi = from, last
  range = '{"from_seq":' .. lo .. ',"to_seq":' .. hi .. '}'
  local sup = redis.call('HGET', h, 'sup')
  redis.call('HSET', h, 'sup', (sup and (sup .. ',') or '') .. lo .. '-' .. hi)
end
redis.call('HSET', h, 'epoch', ARGV[2])
last = last + 1
local json = '{"seq":' .. last .. ',' .. string.sub(ARGV[4], 2, -2) .. ',"superseded_seqs":' .. range .. '}'
redis.call('XADD', KEYS[1], last .. '-0', 'e', json, 'p', 'rewind:' .. ARGV[2])
redis.call('PUBLISH', KEYS[2], ARGV[5] .. ' ' .. json)
redis.call('HSET', h, 'n', last)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', h, ARGV[1])
return {last, lo, hi}
`;

type WithRewind = Redis & {
  aesRewind(
    stream: string,
    channel: string,
    hash: string,
    ...args: (string | number)[]
  ): Promise<[number, number, number]>;
};

export interface RewoundStream {
  /** The agent_rewound event's seq. */
  seq: number;
  superseded: { from_seq: number; to_seq: number } | null;
}

/** Opens epoch `epoch` of the task's stream, superseding its events from `fromSeq` on. Throws when Redis is unavailable. */
export async function rewindStream(
  redis: Redis,
  ttlMs: number,
  where: { taskId: string; session: string },
  rewind: { epoch: number; fromSeq: number; step: number; runId: string },
): Promise<RewoundStream> {
  const r = redis as WithRewind;
  if (typeof r.aesRewind !== 'function') r.defineCommand('aesRewind', { numberOfKeys: 3, lua: REWIND });
  const body = {
    type: 'agent_rewound',
    step: rewind.step,
    run_id: rewind.runId,
    session: where.session,
    task_id: where.taskId,
  };
  const [seq, lo, hi] = await r.aesRewind(
    keys.events(where.taskId),
    keys.channel(where.taskId),
    keys.producers(where.taskId),
    ttlMs,
    rewind.epoch,
    rewind.fromSeq,
    JSON.stringify(body),
    Date.now(),
  );
  return { seq, superseded: lo > 0 ? { from_seq: lo, to_seq: hi } : null };
}

/** The task's relay epoch now (0 before any rewind). Throws when Redis is unavailable. */
export async function currentEpoch(redis: Redis, taskId: string): Promise<number> {
  return Number((await redis.hget(keys.producers(taskId), 'epoch')) ?? 0);
}

/**
 * Runs `fn` holding the task's rewind lock (one rewind of a task at a time: each needs the epoch
 * the last one opened); undefined when another holds it. The lock lapses after a minute, should
 * its holder die.
 */
export async function underRewindLock<T>(redis: Redis, taskId: string, fn: () => Promise<T>): Promise<T | undefined> {
  const key = `${keys.producers(taskId)}:rewinding`;
  if ((await redis.set(key, '1', 'PX', 60_000, 'NX')) !== 'OK') return undefined;
  try {
    return await fn();
  } finally {
    await redis.del(key).catch(() => undefined);
  }
}

/** The seq ranges a task's rewinds superseded (`from-to,...` in its producers hash). */
export function parseSuperseded(raw: string | null | undefined): [number, number][] {
  if (!raw) return [];
  return raw.split(',').map((r) => r.split('-').map(Number) as [number, number]);
}

/** The event as a reader hands it on: marked when a rewind superseded it. */
export function markSuperseded(ev: AgentEvent, ranges: readonly [number, number][]): AgentEvent {
  return ranges.some(([lo, hi]) => ev.seq >= lo && ev.seq <= hi) ? { ...ev, superseded: true } : ev;
}
