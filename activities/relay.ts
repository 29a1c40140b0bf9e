// The run's end on the relay, as the workflow decided it: a small result and
// the final status document cached, then the last events (agent_completed or agent_error among
// them) published as the `end` producer, so a repeat is skipped and nothing is
// published after them. Before it, a run whose events the relay failed to take
// has them published again from its record (recoverEvents; a DAG step calls it
// at its own end).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './index';
import type { BlockEvent, TaskView } from '../workflows/types';
import type { AgentEventBody, EventTag } from '../src/common/relay/events';
import { END_PRODUCER } from '../src/common/relay/publisher';
import { missingEvents } from '../src/common/relay/relay-recovery';
import { releaseSignal, slotsWorkflowId } from '../workflows/definitions';

/**
 * Gives a run's slot back (the release is idempotent: a retried end gives it back again). It never
 * fails the end: a slots workflow gone holds nothing, and one that could not be told frees the slot
 * at its next check of its holders' runs (RUN_WATCH_MS; every few seconds while tasks wait).
 */
export async function releaseSlot(
  deps: Pick<ActivityDeps, 'temporal' | 'logger'>,
  account: string,
  taskId: string,
): Promise<void> {
  await deps.temporal.workflow
    .getHandle(slotsWorkflowId(account))
    .signal(releaseSignal, { taskId })
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError))
        deps.logger.warn({ taskId, account, err: String(err) }, 'the slot was not given back: its next check frees it');
    });
}

export interface PublishEndInput {
  taskId: string;
  session: string;
  floor: number;
  events: BlockEvent[];
  view: TaskView;
  /** A completed run's result body when small (the workflow decides), cached before the status says completed. */
  result?: unknown;
  /** The end's producer: `end`, or a rewound run's epoch's (`r1:end`). */
  producer?: string;
  /** The run's account slot, given back here rather than by a signal of the run's (Admission.release). */
  releaseSlot?: { account: string };
}

/** A gated call's request or decision: its events on the relay, and the task's view (status, waiting calls) cached first. */
export interface PublishApprovalInput {
  taskId: string;
  session: string;
  producer: string;
  floor: number;
  events: BlockEvent[];
  /** The task's view to cache; a workflow step's calls have none (the task caches its own). */
  view?: TaskView;
  /** A workflow step's: its events' tag. */
  tag?: EventTag;
}

export interface RecoverEventsInput {
  taskId: string;
  session: string;
  floor: number;
  /** The producer the recovered events are published as (one per recovery). */
  producer: string;
  /** The run's (or a DAG step's) complete events, in order. */
  record: BlockEvent[];
  /** A DAG step's: its events' tag. */
  tag?: EventTag;
  /** The attempts the workflow gives it: until the last, a relay still down fails the attempt (retried later). */
  attempts: number;
}

export interface RecoverEventsOutput {
  lastSeq: number;
  /** Events published again. */
  recovered: number;
  /** The relay still could not take them (it is down): nothing was recovered. */
  lost?: true;
}

export function createRelayActivities(deps: ActivityDeps) {
  /** The relay is still down: this attempt fails (Temporal tries again later), unless it is the last one. */
  function stillDown(input: RecoverEventsInput): RecoverEventsOutput {
    if (Context.current().info.attempt < input.attempts)
      throw ApplicationFailure.retryable('the event relay (Redis) is unavailable', 'relay_unavailable');
    deps.logger.warn(
      { taskId: input.taskId, ...input.tag },
      'the event relay stayed unavailable; events it lost were not published again',
    );
    return { lastSeq: input.floor, recovered: 0, lost: true };
  }

  return {
    /** Publishes, marked `recovered`, the events of the record the task's stream lacks. */
    async recoverEvents(input: RecoverEventsInput): Promise<RecoverEventsOutput> {
      const stream = await deps.publisher.readAll(input.taskId);
      if (!stream) return stillDown(input);
      const missing = missingEvents(stream, input.record, input.tag).map(
        (e) => ({ ...e, recovered: true }) as unknown as AgentEventBody,
      );
      if (!missing.length) return { lastSeq: input.floor, recovered: 0 };
      const r = await deps.publisher.publish(input.taskId, input.session, input.producer, 0, missing, {
        floor: input.floor,
        tag: input.tag,
      });
      if (r.added === 0 && r.lost) return stillDown(input);
      deps.logger.warn(
        { taskId: input.taskId, recovered: missing.length, ...input.tag },
        'events the relay had lost were published again from the run record',
      );
      return { lastSeq: Math.max(input.floor, r.lastSeq), recovered: missing.length };
    },

    /** The view first: a client that reads the status on seeing the event finds the call waiting (or decided). */
    async publishApproval(input: PublishApprovalInput): Promise<{ lastSeq: number; relayLost?: true }> {
      if (input.view) await deps.statusCache.putKeepingMetadata(input.view);
      const r = await deps.publisher.publish(input.taskId, input.session, input.producer, 0, input.events, {
        floor: input.floor,
        ...(input.tag && { tag: input.tag }),
      });
      return { lastSeq: Math.max(input.floor, r.lastSeq), ...(r.lost && { relayLost: true as const }) };
    },

    async publishEnd(input: PublishEndInput): Promise<void> {
      const slot = input.releaseSlot && releaseSlot(deps, input.releaseSlot.account, input.taskId);
      // The result lands before the status that says it is ready, the status before the terminal event.
      if (input.result !== undefined) await deps.statusCache.putResult(input.taskId, input.result);
      await deps.statusCache.putKeepingMetadata(input.view);
      await deps.publisher.publish(input.taskId, input.session, input.producer ?? END_PRODUCER, 0, input.events, {
        floor: input.floor,
      });
      await slot;
    },
  };
}
