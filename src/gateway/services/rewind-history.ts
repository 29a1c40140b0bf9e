// What a rewind reads in the task's current run (rewind-service.ts): where its model turn N was
// decided (the workflow task to reset to), the first seq that turn published (what the rewind
// supersedes on the relay), the relay epoch the run publishes in, and the calls after that point
// that may have acted on the world (their effects stay: the caller is told which).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';

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
  /** The highest relay epoch the run's producers used (0: none). */
  epoch: number;
  scheduled: Scheduled[];
  /** Scheduled event id → how the activity ended (or started). */
  outcomes: Map<number, SideEffect['state']>;
}

/** Reads the run's activity schedules (their inputs decoded with the client's codec) and outcomes. */
export async function readRunTurns(client: Client, events: HistoryEvent[]): Promise<RunTurns> {
  const scheduled: Scheduled[] = [];
  const outcomes = new Map<number, SideEffect['state']>();
  for (const e of events) {
    const id = Number(e.eventId);
    const a = e.activityTaskScheduledEventAttributes;
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && a) {
      const type = a.activityType?.name ?? '';
      if (type !== 'modelTurn' && !ACTING.has(type)) continue;
      const [input] = await decodeArrayFromPayloads(client.options.loadedDataConverter, a.input?.payloads);
      scheduled.push({ eventId: id, decidedAt: Number(a.workflowTaskCompletedEventId), type, input: input as never });
      outcomes.set(id, 'scheduled');
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
  let epoch = 0;
  for (const s of scheduled) {
    const producer = String(s.input.producer ?? '');
    epoch = Math.max(epoch, Number(/^r(\d+):/.exec(producer)?.[1] ?? 0));
    if (s.type !== 'modelTurn') continue;
    const step = Number(s.input.step);
    if (!turns.has(step)) turns.set(step, { decidedAt: s.decidedAt, floor: Number(s.input.floor ?? 0) });
  }
  return { turns, epoch, scheduled, outcomes };
}

/** The calls scheduled after `decidedAt` that may have acted, in order. */
export function sideEffectsAfter(run: RunTurns, decidedAt: number): SideEffect[] {
  return run.scheduled
    .filter((s) => s.decidedAt >= decidedAt && ACTING.has(s.type))
    .flatMap((s) => {
      const call = s.input.call as { id?: string; name?: string; arguments?: string } | undefined;
      const name = call?.name ?? s.type;
      if (READS.has(name) || (name === 'str_replace_editor' && /"command"\s*:\s*"view"/.test(call?.arguments ?? '')))
        return [];
      const step = Number(/(?:^|:)s(\d+):t\d+$/.exec(String(s.input.producer ?? ''))?.[1] ?? 0);
      return [{ tool_call_id: call?.id ?? '', tool: name, step, state: run.outcomes.get(s.eventId) ?? 'scheduled' }];
    });
}
