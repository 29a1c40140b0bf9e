// Publishes task events to Redis: appended to the task's stream under its seq
// (a re-published seq is silently refused, which is what keeps a retried
// activity from showing a client the same text twice) and announced on the
// task's channel. Best effort: Redis is a relay, so when it is down the events
// are logged and dropped, and the task goes on.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { AgentEvent } from './events';
import { keys } from './keys';

// KEYS[1] stream, KEYS[2] channel; ARGV[1] ttl ms, then pairs (id, json).
const APPEND = `
local added = 0
for i = 2, #ARGV, 2 do
  local ok = redis.pcall('XADD', KEYS[1], ARGV[i], 'e', ARGV[i + 1])
  if type(ok) ~= 'table' or not ok.err then
    redis.call('PUBLISH', KEYS[2], ARGV[i + 1])
    added = added + 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return added
`;

type WithAppend = Redis & { aesAppend(stream: string, channel: string, ...args: (string | number)[]): Promise<number> };

export interface PublisherOptions {
  redis: Redis;
  logger: Logger;
  /** Stream lifetime after the last event, ms. */
  ttlMs: number;
}

export class EventPublisher {
  private readonly redis: WithAppend;

  constructor(private readonly opts: PublisherOptions) {
    this.redis = opts.redis as WithAppend;
    if (typeof this.redis.aesAppend !== 'function') {
      this.redis.defineCommand('aesAppend', { numberOfKeys: 2, lua: APPEND });
    }
  }

  /** Returns how many events were new (the rest were already published). */
  async publish(taskId: string, events: AgentEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const args: (string | number)[] = [this.opts.ttlMs];
    for (const ev of events) args.push(`${ev.seq}-0`, JSON.stringify(ev));
    try {
      return await this.redis.aesAppend(keys.events(taskId), keys.channel(taskId), ...args);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message, taskId, dropped: events.length }, 'event relay unavailable; events dropped from the live stream');
      return 0;
    }
  }

  /** The stream's last event; undefined when there is none or Redis is unavailable. */
  async lastEvent(taskId: string): Promise<AgentEvent | undefined> {
    try {
      const rows = await this.redis.xrevrange(keys.events(taskId), '+', '-', 'COUNT', 1);
      return rows.length ? (JSON.parse(rows[0][1][1]) as AgentEvent) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Events already in the stream from `afterSeq` on (used to resume a retried stream). */
  async readAfter(taskId: string, afterSeq: number): Promise<AgentEvent[]> {
    try {
      const rows = await this.redis.xrange(keys.events(taskId), `(${afterSeq}-0`, '+');
      return rows.map(([, fields]) => JSON.parse(fields[1]) as AgentEvent);
    } catch {
      return [];
    }
  }
}
