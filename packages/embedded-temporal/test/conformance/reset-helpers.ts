// Shared by reset.engine.test.ts: the raw ResetWorkflowExecution call (the TypeScript SDK's client
// has no reset of its own), where in a history a reset goes, and histories in a readable form.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import type { Env } from './harness';
import { waitUntil } from '../support/wait-until';

export const ET = temporal.api.enums.v1.EventType;
export const EXCLUDE = temporal.api.enums.v1.ResetReapplyExcludeType;
export const REAPPLY = temporal.api.enums.v1.ResetReapplyType;
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface ResetOptions {
  runId?: string;
  reason?: string;
  requestId?: string;
  identity?: string;
  reapplyType?: number;
  excludeTypes?: number[];
  postResetOperations?: temporal.api.workflow.v1.IPostResetOperation[];
}

/** ResetWorkflowExecution of `workflowId` (its current run unless `runId`) to `finishEventId`. */
export function resetCall(
  env: Env,
  workflowId: string,
  finishEventId: number,
  o: ResetOptions = {},
): Promise<temporal.api.workflowservice.v1.IResetWorkflowExecutionResponse> {
  return env.connection.workflowService.resetWorkflowExecution({
    namespace: env.namespace,
    workflowExecution: { workflowId, runId: o.runId },
    reason: o.reason ?? 'rewind',
    workflowTaskFinishEventId: Long.fromNumber(finishEventId),
    requestId: o.requestId ?? randomUUID(),
    identity: o.identity,
    resetReapplyType: o.reapplyType,
    resetReapplyExcludeTypes: o.excludeTypes,
    postResetOperations: o.postResetOperations,
  });
}

/** Resets and returns the new run's id. */
export async function reset(env: Env, workflowId: string, finishEventId: number, o?: ResetOptions): Promise<string> {
  return (await resetCall(env, workflowId, finishEventId, o)).runId!;
}

export function json(v: unknown): temporal.api.common.v1.IPayload {
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(v)) };
}

function decoded(p: temporal.api.common.v1.IPayload | undefined): unknown {
  return p?.data ? JSON.parse(Buffer.from(p.data).toString()) : undefined;
}

/**
 * The WorkflowTaskCompleted event of the task that scheduled step `name`: resetting to it takes
 * the run back to just before that task's decisions, so the step is scheduled again.
 */
export function taskThatScheduled(events: HistoryEvent[], name: string): number {
  const scheduled = events.find(
    (e) =>
      e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      decoded(e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]) === name,
  );
  if (!scheduled) throw new Error(`no step ${name} in the history`);
  return Number(scheduled.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId);
}

/** The last WorkflowTaskCompleted event (the task that saw everything before it). */
export function lastTaskCompleted(events: HistoryEvent[]): number {
  const done = events.filter((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  return Number(done[done.length - 1].eventId);
}

/** Event types without their prefix, in order: how the tests compare history shapes. */
export function typeNames(events: HistoryEvent[]): string[] {
  return events.map((e) => ET[e.eventType!].replace('EVENT_TYPE_', ''));
}

/** The signals in a history, as `name:input`. */
export function signalsIn(events: HistoryEvent[]): string[] {
  return events
    .filter((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
    .map((e) => {
      const a = e.workflowExecutionSignaledEventAttributes!;
      return `${a.signalName}:${decoded(a.input?.payloads?.[0]) ?? ''}`;
    });
}

/**
 * Waits until the run has no workflow task pending or running (its last event completed one),
 * with `steps` steps and `signals` signals in its history: where a reset's history is the same on
 * every engine.
 */
export async function settled(h: WorkflowHandle, steps: number, signals = 0): Promise<HistoryEvent[]> {
  const history = await waitUntil(
    `the workflow to settle after ${steps} steps and ${signals} signals`,
    () => h.fetchHistory(),
    ({ events }) =>
      events!.filter((e) => e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_COMPLETED).length === steps &&
      signalsIn(events!).length === signals &&
      events![events!.length - 1].eventType === ET.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  );
  return history.events!;
}

/** A message matched whole. */
export function exactly(message: string): RegExp {
  return new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}
