// Shared by the activities conformance files (activities.engine.test.ts: timeouts and retries;
// activities-completion.engine.test.ts: cancellation, async and by-id completion, local
// activities): reading a run's history, and running one workflow to its end with a worker.
import type { Duration } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { Env, uid } from './harness';
import type { Step } from './workflows/activities';
import * as activities from './activities/activities';

const ET = temporal.api.enums.v1.EventType;
export type Event = temporal.api.history.v1.IHistoryEvent;

export const ms = (d: unknown) => (d ? tsToMs(d as any) : 0);
export const events = async (h: WorkflowHandle) => (await h.fetchHistory()).events as Event[];
export const ofType = (evs: Event[], t: number) => evs.filter((e) => e.eventType === t);
export const activityEvents = (evs: Event[]) =>
  evs
    .filter(
      (e) =>
        e.eventType! >= ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.eventType! <= ET.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    )
    .map((e) => e.eventType);
export const seen = (id: string) => activities.attempts.get(id) ?? [];

/** `run` on the env `getEnv` returns (set up in a beforeAll). */
export function workflowRunner(getEnv: () => Env) {
  /** Runs one workflow to completion with a worker; returns its result, handle and history. */
  return async function run<T>(
    wf: (...a: any[]) => Promise<T>,
    args: unknown[],
    opts: { id?: string; runTimeout?: Duration; taskTimeout?: Duration } = {},
  ) {
    const env = getEnv();
    const id = opts.id ?? uid('act');
    return env.withWorker(async () => {
      const h = await env.client.workflow.start(wf, {
        args: args as any,
        taskQueue: env.taskQueue,
        workflowId: id,
        workflowRunTimeout: opts.runTimeout,
        workflowTaskTimeout: opts.taskTimeout,
      });
      const result = (await h.result()) as T;
      await env.replay(h);
      return { id, h, result, evs: await events(h) };
    });
  };
}

export const step = (name: Step['name'], options: Step['options'], args: unknown[] = []): Step => ({
  name,
  args,
  options,
});
export const noRetry = { maximumAttempts: 1 };
