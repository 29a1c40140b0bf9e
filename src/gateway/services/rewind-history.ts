// What a rewind reads in the task's current run (rewind-service.ts): where its model turn N was
// decided (the workflow task to reset to), the first seq that turn published (what the rewind
// supersedes on the relay), the relay epoch the run publishes in, and the calls after that point
// that may have acted on the world (their effects stay: the caller is told which).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { parseReason } from '../../common/tasks/rewind-spec';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Activities whose calls may change something outside the run: the computer's, the browser's, MCP tools. */
const ACTING = new Set(['runComputerTool', 'runBrowserTool', 'callMcpTool']);
/** Calls of those that only read. */
const READS = new Set(['glob', 'grep', 'browser_snapshot', 'browser_take_screenshot', 'browser_tabs']);

/** A call of the abandoned branch that may have acted: what it was, and how far it got. */
export interface SideEffect {
  tool_call_id: string;
  tool: string;
  /** The model turn that made it. */
  step: number;
  /** completed / failed: it ran (its effects stay); started: it may have; scheduled: it never started. */
  state: 'completed' | 'failed' | 'started' | 'scheduled';
}

interface Scheduled {
  eventId: number;
  decidedAt: number;
  type: string;
  input: Record<string, unknown>;
}

export interface RunTurns {
  /** Model turns of the run, first schedule of each step: the event that decided it, the floor it started at. */
  turns: Map<number, { decidedAt: number; floor: number }>;
  /** The highest relay epoch the run knows: its producers' (r<k>:) and the one its own rewind opened (0: none). */
  epoch: number;
  /** Activity id of each scheduled event (to read pending activities' state by). */
  activityIds: Map<number, string>;
  /** The run gave its session's turn back (a turnDone signal) after this event id, if it did. */
  releasedAfter?: number;
  scheduled: Scheduled[];
  /** Scheduled event id → how the activity ended (or started). */
  outcomes: Map<number, SideEffect['state']>;
}

/** Reads the run's activity schedules (their inputs decoded with the client's codec) and outcomes. */
export async function readRunTurns(client: Client, events: HistoryEvent[]): Promise<RunTurns> {
  const scheduled: Scheduled[] = [];
  const outcomes = new Map<number, SideEffect['state']>();
  const activityIds = new Map<number, string>();
  let epoch = 0;
  let releasedAfter: number | undefined;
  for (const e of events) {
    const id = Number(e.eventId);
    const reset = e.workflowTaskFailedEventAttributes?.failure?.message;
    if (reset) epoch = Math.max(epoch, parseReason(reset)?.epoch ?? 0);
    if (e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'turnDone') releasedAfter = id;
    const a = e.activityTaskScheduledEventAttributes;
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && a) {
      const type = a.activityType?.name ?? '';
      if (type !== 'modelTurn' && !ACTING.has(type)) continue;
      const [input] = await decodeArrayFromPayloads(client.options.loadedDataConverter, a.input?.payloads);
      scheduled.push({ eventId: id, decidedAt: Number(a.workflowTaskCompletedEventId), type, input: input as never });
      outcomes.set(id, 'scheduled');
      activityIds.set(id, a.activityId ?? '');
    }
    const started = e.activityTaskStartedEventAttributes?.scheduledEventId;
    if (started) outcomes.set(Number(started), 'started');
    const done = e.activityTaskCompletedEventAttributes?.scheduledEventId;
    if (done) outcomes.set(Number(done), 'completed');
    const failed =
      e.activityTaskFailedEventAttributes?.scheduledEventId ?? e.activityTaskTimedOutEventAttributes?.scheduledEventId;
    if (failed) outcomes.set(Number(failed), 'failed');
  }
  const turns = new Map<number, { decidedAt: number; floor: number }>();
  for (const s of scheduled) {
    const producer = String(s.input.producer ?? '');
    epoch = Math.max(epoch, Number(/^r(\d+):/.exec(producer)?.[1] ?? 0));
    if (s.type !== 'modelTurn') continue;
    const step = Number(s.input.step);
    if (!turns.has(step)) turns.set(step, { decidedAt: s.decidedAt, floor: Number(s.input.floor ?? 0) });
  }
  return { turns, epoch, scheduled, outcomes, activityIds, ...(releasedAfter && { releasedAfter }) };
}

/**
 * The calls scheduled after `decidedAt` that may have acted, in order. `pending`: the state of the
 * base run's activities still under way (by activity id), as describe has it: a server writes a
 * retried activity's start only when it closes, so history alone would call a running one "scheduled".
 */
export function sideEffectsAfter(
  run: RunTurns,
  decidedAt: number,
  pending: ReadonlyMap<string, SideEffect['state']> = new Map(),
): SideEffect[] {
  return run.scheduled
    .filter((s) => s.decidedAt >= decidedAt && ACTING.has(s.type))
    .flatMap((s) => {
      const call = s.input.call as { id?: string; name?: string; arguments?: string } | undefined;
      const name = call?.name ?? s.type;
      if (READS.has(name) || (name === 'str_replace_editor' && /"command"\s*:\s*"view"/.test(call?.arguments ?? '')))
        return [];
      const step = Number(/(?:^|:)s(\d+):t\d+$/.exec(String(s.input.producer ?? ''))?.[1] ?? 0);
      const state = pending.get(run.activityIds.get(s.eventId) ?? '') ?? run.outcomes.get(s.eventId) ?? 'scheduled';
      return [{ tool_call_id: call?.id ?? '', tool: name, step, state }];
    });
}
