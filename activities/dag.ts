// The I/O of a run's declarative workflows (SPEC 2.3): a step's end on the
// relay (agent_step, published by its workflow), the task's progress events
// with the status document they move, and the check of a step's answer against its
// output_schema.
import type { ActivityDeps } from './index';
import type { BlockEvent, TaskView } from '../workflows/types';
import { judgeJson } from '../src/common/json-schema/schema-check';

export interface PublishDagEventsInput {
  taskId: string;
  session: string;
  /** The report's place in the task's reports: the relay skips what a retry already published. */
  offset: number;
  floor: number;
  events: BlockEvent[];
  view: TaskView;
}

/** Problems shown in a step's failure, at most. */
const MAX_ERRORS = 20;

export function createDagActivities(deps: ActivityDeps) {
  return {
    async publishDagEvents(input: PublishDagEventsInput): Promise<{ lastSeq: number; lost?: true }> {
      await deps.statusCache.putKeepingMetadata(input.view);
      const r = await deps.publisher.publish(input.taskId, input.session, 'dag', input.offset, input.events, {
        floor: input.floor,
      });
      return { lastSeq: r.lastSeq, ...(r.lost && { lost: true as const }) };
    },

    /** A step's end (agent_step), published by its workflow as a producer of its own; `lost` when the relay did not take it. */
    async publishStepEnd(input: {
      taskId: string;
      session: string;
      producer: string;
      event: BlockEvent;
    }): Promise<{ lastSeq: number; lost?: true }> {
      const r = await deps.publisher.publish(input.taskId, input.session, input.producer, 0, [input.event]);
      return { lastSeq: r.lastSeq, ...(r.lost && { lost: true as const }) };
    },

    async checkStepOutput(input: {
      schema: Record<string, unknown>;
      text: string;
    }): Promise<{ output: unknown } | { errors: string[] }> {
      const judged = judgeJson(input.schema, input.text, { maxErrors: MAX_ERRORS, maxText: 0 });
      return 'output' in judged ? judged : { errors: judged.errors };
    },
  };
}
