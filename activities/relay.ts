// Activities that put the workflow's own events on the relay and keep the
// status cache current; plus cost accounting from the price table.
import type { ActivityDeps } from './index';
import type { BlockEvent, Mode, TaskView, Usage } from '../workflows/types';
import type { AgentEvent } from '../src/relay/events';

export interface PublishInput {
  taskId: string;
  session: string;
  /** seq of the first event; the workflow keeps the counter so retries reuse the same numbers. */
  seqStart: number;
  events: BlockEvent[];
  /** Status document cached for fast status reads. */
  view?: TaskView;
  /** The task has ended: cache with the result-retention TTL. */
  final?: boolean;
  /** The completed task's result body, cached so the first read is as cheap as later ones. */
  result?: object;
}

export function createRelayActivities(deps: ActivityDeps) {
  return {
    /** Returns the next free seq. */
    async publishEvents(input: PublishInput): Promise<number> {
      if (input.view) await deps.statusCache.put(input.view);
      if (input.result) await deps.statusCache.putResult(input.taskId, input.result);
      const events = input.events.map((e, i) => ({ ...e, session: input.session, task_id: input.taskId, seq: input.seqStart + i }) as AgentEvent);
      await deps.publisher.publish(input.taskId, events);
      return input.seqStart + events.length;
    },

    /** USD cost of the run's token usage, as a decimal string. */
    async computeCost(input: { mode: Mode; usage: Usage }): Promise<string> {
      const model = { flash: deps.config.MODEL_FLASH, base: deps.config.MODEL_BASE, max: deps.config.MODEL_MAX }[input.mode];
      const price = deps.config.MODEL_PRICES[model];
      if (!price) return '0.000000';
      const usd = (input.usage.promptTokens * price.input + input.usage.completionTokens * price.output) / 1_000_000;
      return usd.toFixed(6);
    },
  };
}
