// Cached task status documents, so status reads cost one Redis GET. The
// workflow (queried through Temporal) stays the source of truth: a miss or a
// Redis failure falls back to it.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { TaskView } from '../../workflows/types';
import { keys } from './keys';

export class StatusCache {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    /** Lifetime of a cached document, ms (the retention period). */
    private readonly ttlMs: number,
  ) {}

  async put(view: TaskView): Promise<void> {
    try {
      await this.redis.set(keys.status(view.task_id), JSON.stringify(view), 'PX', this.ttlMs);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId: view.task_id }, 'status cache unavailable');
    }
  }

  /** undefined on a miss; throws when Redis is unreachable (callers fall back). */
  async get(taskId: string): Promise<TaskView | undefined> {
    const raw = await this.redis.get(keys.status(taskId));
    return raw ? (JSON.parse(raw) as TaskView) : undefined;
  }

  async putResult(taskId: string, result: unknown): Promise<void> {
    try {
      await this.redis.set(keys.result(taskId), JSON.stringify(result), 'PX', this.ttlMs);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId }, 'result cache unavailable');
    }
  }

  async getResult<T>(taskId: string): Promise<T | undefined> {
    const raw = await this.redis.get(keys.result(taskId));
    return raw ? (JSON.parse(raw) as T) : undefined;
  }
}
