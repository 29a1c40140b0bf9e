// Activities that put the workflow's own events on the relay and keep the
// status cache current; plus cost accounting from the price table.
import type { ActivityDeps } from './index';
import type { BlockEvent, Mode, TaskView, Usage } from '../workflows/types';
import { costOf } from '../workflows/types';
import { modelForMode } from '../src/config';
import { TERMINAL_EVENTS, stampEvents } from '../src/relay/events';

export interface PublishInput {
  taskId: string;
  session: string;
  /** seq of the first event; the workflow keeps the counter so retries reuse the same numbers. */
  seqStart: number;
  events: BlockEvent[];
  /** Status document cached for fast status reads. */
  view?: TaskView;
  /** The completed task's result body, cached so the first read is as cheap as later ones. */
  result?: object;
  /**
   * Number the events after the stream's last one when that is further on
   * than seqStart (a failed model turn may have published events the workflow
   * never heard of), and publish nothing when the stream already ended (a
   * retry of this very publish).
   */
  append?: boolean;
}

export function createRelayActivities(deps: ActivityDeps) {
  return {
    /** Returns the next free seq. */
    async publishEvents(input: PublishInput): Promise<number> {
      // The status and the result are independent writes; both land before the events announce them
      // (a script's first run after a Redis restart is retried by the client, so issue order alone
      // would not guarantee that).
      await Promise.all([input.view && deps.statusCache.put(input.view), input.result && deps.statusCache.putResult(input.taskId, input.result)]);
      let seqStart = input.seqStart;
      if (input.append) {
        const last = await deps.publisher.lastEvent(input.taskId);
        if (last && TERMINAL_EVENTS.has(last.type)) return Math.max(seqStart, last.seq + 1);
        if (last) seqStart = Math.max(seqStart, last.seq + 1);
      }
      const events = stampEvents(input.taskId, input.session, seqStart, input.events);
      await deps.publisher.publish(input.taskId, events);
      return seqStart + events.length;
    },

    /**
     * USD cost of the run's token usage, as a decimal string. Only runs started
     * before the gateway put the price in the task's input call it (see
     * LEAN_START_PATCH); kept for them.
     */
    async computeCost(input: { mode: Mode; usage: Usage }): Promise<string> {
      return costOf(input.usage, deps.config.MODEL_PRICES[modelForMode(deps.config, input.mode)]);
    },
  };
}
