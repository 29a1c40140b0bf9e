// Publishes task events to Redis. Several producers publish a task's events at
// once (the workflow's own, a model turn, each tool call), so the relay numbers
// them: each event gets the task's next seq as it is appended, which keeps the
// log gap-free and ordered however the producers interleave.
//
// Each producer has a stable id chosen by the workflow (`s3:m`, `s3:t1`,
// `end`) and numbers its own events from 0. A producer retried after a crash
// publishes its events again from 0 and the relay skips those it already has,
// so a resumed stream never shows an event twice. Once a task's terminal event
// is in (producer `end`), nothing else is appended, until a rewind opens a new
// epoch (rewind.ts), whose producers carry its number (`r1:s3`, `r1:end`).
//
// Best effort: Redis is a relay, so when it is down the events are logged and
// dropped, and the task goes on; the publish says so (`lost`), as it does when
// it finds the producer's earlier events missing (Redis lost them), and the
// run republishes its complete events from its own record (relay-recovery.ts).
// `floor` (the highest seq the workflow has heard of) keeps numbering
// monotonic even when Redis lost the task's keys.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { AgentEvent, AgentEventBody, EventTag } from './events';
import { keys } from './keys';
import { currentEpoch, rewindStream, underRewindLock, type RewoundStream } from './rewind';

/** The producer that publishes a task's terminal event (the workflow's end, or one synthesised for a run that vanished). */
export const END_PRODUCER = 'end';

// KEYS[1] stream, KEYS[2] channel, KEYS[3] producers hash.
// ARGV[1] ttl ms, ARGV[2] producer, ARGV[3] offset of the first body, ARGV[4]
// floor, ARGV[5] meta ('' = none), ARGV[6] end producer (of epoch 0; r<k>: prefixed in epoch k), ARGV[7] the publish
// time (epoch ms); then the bodies (JSON objects without seq). Returns {added,
// last seq, gap}: gap 1 when events of this producer before `offset` are not
// in (they were dropped while Redis was down, or Redis lost them), or when
// `floor` is above the task's last seq (Redis lost the task's latest events). The channel's message is `<publish ms> <event JSON>`: the
// subscriber measures the relay's lag from it (the stream keeps the JSON alone,
// which is what clients get).
const APPEND = `
local h = KEYS[3]
local producer = ARGV[2]
-- A rewound task publishes in epochs (rewind.ts): producers r<k>: of epoch k. A producer of an
-- epoch before the task's is of an abandoned branch (a call still running when it was rewound).
local prefix = string.match(producer, '^(r%d+:)') or ''
local epoch = tonumber(string.match(prefix, '^r(%d+):') or '0')
if epoch < tonumber(redis.call('HGET', h, 'epoch') or '0') then
  return {0, tonumber(redis.call('HGET', h, 'n') or '0'), 0}
end
-- Once the epoch's terminal event is in, nothing else of it is appended.
local ender = prefix .. ARGV[6]
if producer ~= ender and redis.call('HEXISTS', h, 'c:' .. ender) == 1 then
  return {0, tonumber(redis.call('HGET', h, 'n') or '0'), 0}
end
local count = tonumber(redis.call('HGET', h, 'c:' .. producer) or '0')
local offset = tonumber(ARGV[3])
local gap = 0
if offset > count then gap = 1 end
local last = tonumber(redis.call('HGET', h, 'n') or '0')
-- The workflow heard of seqs the relay no longer has: Redis lost the task's latest events.
if tonumber(ARGV[4]) > last then
  last = tonumber(ARGV[4])
  gap = 1
end
local added = 0
for i = 8, #ARGV do
  local idx = offset + (i - 8)
  if idx >= count then
    last = last + 1
    local json = '{"seq":' .. last .. ',' .. string.sub(ARGV[i], 2)
    local ok = redis.pcall('XADD', KEYS[1], last .. '-0', 'e', json, 'p', producer)
    if type(ok) == 'table' and ok.err then
      -- The stream is ahead of the counter (its hash was lost): continue after its last entry.
      local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
      last = tonumber(string.match(top[1][1], '^(%d+)')) + 1
      json = '{"seq":' .. last .. ',' .. string.sub(ARGV[i], 2)
      redis.call('XADD', KEYS[1], last .. '-0', 'e', json, 'p', producer)
    end
    redis.call('PUBLISH', KEYS[2], ARGV[7] .. ' ' .. json)
    if count == 0 and added == 0 then redis.call('HSETNX', h, 'f:' .. producer, last) end
    count = idx + 1
    added = added + 1
  end
end
if added > 0 then redis.call('HSET', h, 'c:' .. producer, count, 'n', last) end
if ARGV[5] ~= '' then redis.call('HSET', h, 'm:' .. producer, ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', h, ARGV[1])
return {added, last, gap}
`;

type WithAppend = Redis & {
  aesAppend(
    stream: string,
    channel: string,
    hash: string,
    ...args: (string | number)[]
  ): Promise<[number, number, number]>;
};

export interface PublisherOptions {
  redis: Redis;
  logger: Logger;
  /** Stream lifetime after the last event, ms. */
  ttlMs: number;
}

export interface PublishOptions {
  /** The highest seq the caller knows was assigned (numbering continues above it). */
  floor?: number;
  /** A small JSON document kept with the producer (a model turn's outcome, for its retry). */
  meta?: unknown;
  /** Fields every event gets (a DAG step's workflow_id and step_id). */
  tag?: EventTag;
}

export interface Published {
  /** Events newly appended (the rest were already in). */
  added: number;
  /** The task's highest seq after this publish; `floor` when Redis is unavailable. */
  lastSeq: number;
  /** Events of this producer are missing from the relay: these (Redis was unavailable) or earlier ones. */
  lost: boolean;
}

/** What a producer has published so far: for a retried producer to pick up where it stopped. */
export interface ProducerState {
  count: number;
  events: AgentEvent[];
  meta?: unknown;
}

export class EventPublisher {
  private readonly redis: WithAppend;

  constructor(private readonly opts: PublisherOptions) {
    this.redis = opts.redis as WithAppend;
    if (typeof this.redis.aesAppend !== 'function') {
      this.redis.defineCommand('aesAppend', { numberOfKeys: 3, lua: APPEND });
    }
  }

  /**
   * Publishes the producer's events numbered `offset`, `offset + 1`, ... in
   * its own count; those it already published are skipped.
   */
  async publish(
    taskId: string,
    session: string,
    producer: string,
    offset: number,
    bodies: readonly AgentEventBody[],
    o: PublishOptions = {},
  ): Promise<Published> {
    const floor = o.floor ?? 0;
    if (bodies.length === 0 && o.meta === undefined) return { added: 0, lastSeq: floor, lost: false };
    const args: (string | number)[] = [
      this.opts.ttlMs,
      producer,
      offset,
      floor,
      o.meta === undefined ? '' : JSON.stringify(o.meta),
      END_PRODUCER,
      Date.now(),
    ];
    for (const b of bodies) args.push(JSON.stringify({ ...b, ...o.tag, session, task_id: taskId }));
    try {
      const [added, lastSeq, gap] = await this.redis.aesAppend(
        keys.events(taskId),
        keys.channel(taskId),
        keys.producers(taskId),
        ...args,
      );
      return { added, lastSeq, lost: gap === 1 };
    } catch (err) {
      this.opts.logger.warn(
        { err: (err as Error).message, taskId, dropped: bodies.length },
        'event relay unavailable; events dropped from the live stream',
      );
      return { added: 0, lastSeq: floor, lost: true };
    }
  }

  /** The producer's published events and meta; empty when there are none or Redis is unavailable. */
  async producerState(taskId: string, producer: string): Promise<ProducerState> {
    try {
      const [count, first, meta] = await this.redis.hmget(
        keys.producers(taskId),
        `c:${producer}`,
        `f:${producer}`,
        `m:${producer}`,
      );
      if (!count || !first) return { count: 0, events: [], ...(meta && { meta: JSON.parse(meta) }) };
      const rows = await this.redis.xrange(keys.events(taskId), `${first}-0`, '+');
      const events = rows.filter(([, f]) => f[3] === producer).map(([, f]) => JSON.parse(f[1]) as AgentEvent);
      return { count: Number(count), events, ...(meta && { meta: JSON.parse(meta) }) };
    } catch {
      return { count: 0, events: [] };
    }
  }

  /**
   * Runs a rewind of the task (rewind.ts): `fn` gets the task's relay epoch now and does the rest
   * under the task's rewind lock; undefined when another rewind holds it. Throws when Redis is unavailable.
   */
  async rewinding<T>(taskId: string, fn: (epoch: number) => Promise<T>): Promise<T | undefined> {
    return underRewindLock(this.redis, taskId, async () => fn(await currentEpoch(this.redis, taskId)));
  }

  /** Opens a rewound task's new epoch (rewind.ts); throws when Redis is unavailable. */
  rewind(
    where: { taskId: string; session: string },
    rewind: { epoch: number; fromSeq: number; step: number; runId: string },
  ): Promise<RewoundStream> {
    return rewindStream(this.redis, this.opts.ttlMs, where, rewind);
  }

  /**
   * The prefix of the task's producers in its current epoch (`r2:` after two rewinds, '' before
   * any): what publishes for the task from outside its run (a synthesised end) must use it.
   */
  async epochPrefix(taskId: string): Promise<string> {
    try {
      const epoch = Number((await this.redis.hget(keys.producers(taskId), 'epoch')) ?? 0);
      return epoch > 0 ? `r${epoch}:` : '';
    } catch {
      return '';
    }
  }

  /** The task's last event; undefined when there is none or Redis is unavailable. */
  async lastEvent(taskId: string): Promise<AgentEvent | undefined> {
    try {
      const [row] = await this.redis.xrevrange(keys.events(taskId), '+', '-', 'COUNT', 1);
      return row ? (JSON.parse(row[1][1]) as AgentEvent) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every event of the task's stream, oldest first; undefined when Redis is unavailable. */
  async readAll(taskId: string): Promise<AgentEvent[] | undefined> {
    try {
      const rows = await this.redis.xrange(keys.events(taskId), '-', '+');
      return rows.map(([, fields]) => JSON.parse(fields[1]) as AgentEvent);
    } catch {
      return undefined;
    }
  }

  /** Events in the stream after `afterSeq`. */
  async readAfter(taskId: string, afterSeq: number): Promise<AgentEvent[]> {
    try {
      const rows = await this.redis.xrange(keys.events(taskId), `(${afterSeq}-0`, '+');
      return rows.map(([, fields]) => JSON.parse(fields[1]) as AgentEvent);
    } catch {
      return [];
    }
  }
}
