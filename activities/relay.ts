// The run's end on the relay, as the workflow decided it: a small result and
// the final status document cached, then the last events (agent_completed or agent_error among
// them) published as the `end` producer, so a repeat is skipped and nothing is
// published after them.
import type { ActivityDeps } from './index';
import type { BlockEvent, TaskView } from '../workflows/types';
import { END_PRODUCER } from '../src/relay/publisher';

export interface PublishEndInput {
  taskId: string;
  session: string;
  floor: number;
  events: BlockEvent[];
  view: TaskView;
  /** A completed run's result body when small (the workflow decides), cached before the status says completed. */
  result?: unknown;
}

export function createRelayActivities(deps: ActivityDeps) {
  return {
    async publishEnd(input: PublishEndInput): Promise<void> {
      // The result lands before the status that says it is ready, the status before the terminal event.
      if (input.result !== undefined) await deps.statusCache.putResult(input.taskId, input.result);
      await deps.statusCache.putKeepingMetadata(input.view);
      await deps.publisher.publish(input.taskId, input.session, END_PRODUCER, 0, input.events, { floor: input.floor });
    },
  };
}
