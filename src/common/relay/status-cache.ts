// Cached task status documents, so status reads cost one Redis GET. The
// workflow (queried through Temporal) stays the source of truth: a miss or a
// Redis failure falls back to it.
//
// Several writers race for one document (the gateway caches `queued` at
// submit and whatever it read from Temporal on a miss; the worker caches each
// step), so a write never moves a task backwards: a document whose status is
// further along (queued < running, input_required < finished) is kept. Metadata patches are
// compare-and-set on the document they merged into.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { TaskStatus, TaskView } from '../../../workflows/types';
import { keys } from './keys';
import { withTimeout } from '../timeout';

// input_required ranks with running: a run moves between the two both ways (approval gates).
const RANK: Record<TaskStatus, number> = {
  queued: 0,
  running: 1,
  input_required: 1,
  completed: 2,
  failed: 2,
  cancelled: 2,
};

const LUA_RANK = `local rank = { ${Object.entries(RANK)
  .map(([s, r]) => `${s} = ${r}`)
  .join(', ')} }`;

// KEYS[1] document; ARGV[1] json, ARGV[2] its rank, ARGV[3] ttl ms,
// ARGV[4] the exact document expected in place ('' = any, ranked instead).
// Returns 1 when written, 0 when refused.
const PUT = `
local cur = redis.call('GET', KEYS[1])
if cur then
  if ARGV[4] ~= '' then
    if cur ~= ARGV[4] then return 0 end
  else
    local ok, doc = pcall(cjson.decode, cur)
    ${LUA_RANK}
    if ok and type(doc) == 'table' and rank[doc.status] and rank[doc.status] > tonumber(ARGV[2]) then return 0 end
  end
elseif ARGV[4] ~= '' then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

// The worker's write, in one round trip when it can: KEYS[1] document; ARGV[1]
// json, ARGV[2] its rank, ARGV[3] ttl ms. Returns 0 when the cached document is
// further along, the cached document when it holds metadata the new one lacks
// or has otherwise (the caller merges and compare-and-sets), 1 when written.
// Values are compared by their cjson encodings: a false "differs" only costs
// the caller's merge.
const PUT_KEEPING = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, doc = pcall(cjson.decode, cur)
  if ok and type(doc) == 'table' then
    ${LUA_RANK}
    if rank[doc.status] and rank[doc.status] > tonumber(ARGV[2]) then return 0 end
    if type(doc.metadata) == 'table' then
      local new = cjson.decode(ARGV[1]).metadata
      for k, v in pairs(doc.metadata) do
        local nv = type(new) == 'table' and new[k] or nil
        if nv == nil or cjson.encode(nv) ~= cjson.encode(v) then return cur end
      end
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

type WithPut = Redis & {
  aesStatusPut(key: string, json: string, rank: number, ttlMs: number, expected: string): Promise<number>;
  aesStatusPutKeeping(key: string, json: string, rank: number, ttlMs: number): Promise<number | string>;
};

/** Tries of a metadata merge that keeps losing the race to other writers before it gives up on the cache. */
const MERGE_TRIES = 5;

/**
 * Marks a finished document as read from Temporal's record of the closed run.
 * The worker caches a run's end just before the run closes (publishEnd), so a
 * finished document without it may run ahead of Temporal: readers confirm it.
 */
const RECORDED = 'closed_in_temporal';

export interface CacheOptions {
  /** False while Redis is known to be away: reads fail and writes are skipped at once. */
  available?: () => boolean;
  /** Longest wait for one Redis call before the cache is passed over (a frozen Redis never answers), ms. */
  opTimeoutMs?: number;
}

export class StatusCache {
  private readonly redis: WithPut;

  constructor(
    redis: Redis,
    private readonly logger: Logger,
    /** Lifetime of a cached document, ms (the retention period). */
    private readonly ttlMs: number,
    private readonly opts: CacheOptions = {},
  ) {
    this.redis = redis as WithPut;
    if (typeof this.redis.aesStatusPut !== 'function')
      this.redis.defineCommand('aesStatusPut', { numberOfKeys: 1, lua: PUT });
    if (typeof this.redis.aesStatusPutKeeping !== 'function')
      this.redis.defineCommand('aesStatusPutKeeping', { numberOfKeys: 1, lua: PUT_KEEPING });
  }

  /**
   * Caches the document unless the cached one is further along; `recorded`
   * says a finished view comes from Temporal's record of the closed run.
   * Never throws (the cache is best effort).
   */
  async put(view: TaskView, opts: { recorded?: boolean } = {}): Promise<boolean> {
    const doc = opts.recorded && isFinal(view) ? { ...view, [RECORDED]: true } : view;
    try {
      return (
        (await this.call(() =>
          this.redis.aesStatusPut(keys.status(view.task_id), JSON.stringify(doc), RANK[view.status], this.ttlMs, ''),
        )) === 1
      );
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId: view.task_id }, 'status cache unavailable');
      return false;
    }
  }

  /**
   * Applies `change` to the cached document (compare-and-set, retried when
   * another writer got in between); caches `fallback` when there is none.
   * Returns what is cached now, or undefined when Redis is unavailable.
   */
  async update(fallback: TaskView, change: (view: TaskView) => TaskView): Promise<TaskView | undefined> {
    const key = keys.status(fallback.task_id);
    try {
      for (let i = 0; i < MERGE_TRIES; i++) {
        const raw = await this.call(() => this.redis.get(key));
        if (raw === null) {
          const next = change(fallback);
          if (await this.put(next)) return next;
          continue;
        }
        const next = change(JSON.parse(raw) as TaskView);
        if (
          (await this.call(() =>
            this.redis.aesStatusPut(key, JSON.stringify(next), RANK[next.status], this.ttlMs, raw),
          )) === 1
        )
          return next;
      }
      // Writers this busy will refresh the document soon anyway; Temporal has the patch.
      this.logger.warn({ taskId: fallback.task_id }, 'status cache update kept losing races; left to the next write');
      await this.redis.del(key);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId: fallback.task_id }, 'status cache unavailable');
    }
    return undefined;
  }

  /**
   * The worker's write of a run's status: like put, but metadata a PATCH
   * merged into the cached document since the workflow last heard of it is
   * kept (the gateway signals the workflow and merges into the cache; the
   * document the worker writes may predate the patch). Never throws.
   */
  async putKeepingMetadata(view: TaskView): Promise<void> {
    const key = keys.status(view.task_id);
    const merge = (cached: TaskView) =>
      RANK[cached.status] > RANK[view.status]
        ? cached
        : { ...view, metadata: { ...view.metadata, ...cached.metadata } };
    try {
      const r = await this.redis.aesStatusPutKeeping(key, JSON.stringify(view), RANK[view.status], this.ttlMs);
      if (typeof r !== 'string') return;
      // A patch the workflow had not heard of: merge it in, unless another writer got there first.
      if (
        (await this.redis.aesStatusPut(
          key,
          JSON.stringify(merge(JSON.parse(r) as TaskView)),
          RANK[view.status],
          this.ttlMs,
          r,
        )) === 1
      )
        return;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId: view.task_id }, 'status cache unavailable');
      return;
    }
    await this.update(view, merge);
  }

  /** undefined on a miss; throws when Redis is unreachable (callers fall back). */
  async get(taskId: string): Promise<TaskView | undefined> {
    return (await this.getRecorded(taskId))?.view;
  }

  /** The cached view, and whether a finished one was read from Temporal's record of the closed run. */
  async getRecorded(taskId: string): Promise<{ view: TaskView; recorded: boolean } | undefined> {
    const raw = await this.call(() => this.redis.get(keys.status(taskId)));
    if (!raw) return undefined;
    const { [RECORDED]: recorded, ...view } = JSON.parse(raw) as TaskView & { [RECORDED]?: boolean };
    return { view, recorded: recorded === true };
  }

  /** One Redis call, refused at once while Redis is away and given up after opTimeoutMs. */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.opts.available && !this.opts.available()) return Promise.reject(new Error('redis is away'));
    return this.opts.opTimeoutMs ? withTimeout(fn(), this.opts.opTimeoutMs, 'redis gave no answer') : fn();
  }

  /** Drops the task's document (one cached for a start that then failed), and with `result` its cached result (a rewound task's). Never throws. */
  async forget(taskId: string, opts: { result?: boolean } = {}): Promise<void> {
    try {
      await this.call(() =>
        opts.result ? this.redis.del(keys.status(taskId), keys.result(taskId)) : this.redis.del(keys.status(taskId)),
      );
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId }, 'status cache unavailable');
    }
  }

  async putResult(taskId: string, result: unknown): Promise<void> {
    try {
      await this.call(() => this.redis.set(keys.result(taskId), JSON.stringify(result), 'PX', this.ttlMs));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId }, 'result cache unavailable');
    }
  }

  async getResult<T>(taskId: string): Promise<T | undefined> {
    const raw = await this.call(() => this.redis.get(keys.result(taskId)));
    return raw ? (JSON.parse(raw) as T) : undefined;
  }
}

function isFinal(view: TaskView): boolean {
  return RANK[view.status] === 2;
}
