// What a failed attempt that Temporal will retry tells the people watching:
// an `agent_retry` event on the task's stream and a warning in the worker's
// log. Temporal owns the retry itself (the activity's retry policy); this only
// makes it visible instead of a silent wait.
import type { Context } from '@temporalio/activity';
import type { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { EventTag } from '../src/common/relay/events';

export interface RetryWhere {
  taskId: string;
  session: string;
  /** The attempt's producer on the relay; the notice publishes as `<producer>:r<attempt>`. */
  producer: string;
  floor: number;
  /** A DAG step's run: its events carry the workflow and step ids. */
  tag?: EventTag;
}

export interface RetryWhat {
  what: 'model' | 'tool';
  /** The tool's public name, for a tool call. */
  tool?: string;
  /** When the next attempt starts, when the activity chose it (nextRetryDelay). */
  retryInMs?: number;
}

/** Publishes and logs the notice; never fails the attempt further (the relay may be down). */
export async function noticeRetry(
  deps: Pick<ActivityDeps, 'publisher' | 'logger'>,
  ctx: Context,
  where: RetryWhere,
  what: RetryWhat,
  failure: ApplicationFailure,
): Promise<void> {
  const attempt = ctx.info.attempt;
  const error = { type: failure.type ?? 'error', message: failure.message };
  deps.logger.warn(
    {
      task_id: where.taskId,
      what: what.what,
      ...(what.tool && { tool: what.tool }),
      attempt,
      error: error.type,
      reason: error.message,
      retry_in_ms: what.retryInMs,
    },
    `${what.what} call failed; Temporal retries it`,
  );
  const event = {
    type: 'agent_retry' as const,
    what: what.what,
    ...(what.tool && { tool: what.tool }),
    attempt,
    error,
    ...(what.retryInMs !== undefined && { retry_in_ms: what.retryInMs }),
  };
  await deps.publisher
    .publish(where.taskId, where.session, `${where.producer}:r${attempt}`, 0, [event], {
      floor: where.floor,
      tag: where.tag,
    })
    .catch(() => undefined);
}
