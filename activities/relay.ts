// The run's end on the relay, as the workflow decided it: the final status
// document cached, then the last events (agent_completed or agent_error among
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
}

export function createRelayActivities(deps: ActivityDeps) {
  return {
    async publishEnd(input: PublishEndInput): Promise<void> {
      // The status lands before the terminal event announces it.
      await deps.statusCache.putKeepingMetadata(input.view);
      await deps.publisher.publish(input.taskId, input.session, END_PRODUCER, 0, input.events, { floor: input.floor });
    },
  };
}
