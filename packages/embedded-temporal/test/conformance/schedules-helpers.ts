// Shared set-up of the schedules conformance files: one server and one worker
// per file (schedules start workflows whenever they like), schedule clean-up,
// and the id format the real scheduler gives started workflows.
import {
  Client,
  ScheduleDescription,
  ScheduleHandle,
  ScheduleOptions,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, Workflow } from '@temporalio/common';
import { createEnv, Env, uid } from './harness';
import { releaseSignal } from './workflows/schedules';

export const WORKFLOWS = require.resolve('./workflows/schedules');
export const CustomKeyword = defineSearchAttributeKey('CustomKeyword', SearchAttributeType.KEYWORD);

/**
 * Lets time pass on purpose, for a test that shows something did NOT happen in it (a paused
 * schedule takes no action) or that sets a scene (a server down for a while). What is awaited
 * is awaited with waitUntil (test/support/wait-until.ts, a copy of the repository's).
 */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Workflow ids the real scheduler gives: `${workflowId}-${nominal time, RFC3339 seconds}`. */
export function expectedId(base: string, at: Date): string {
  return `${base}-${new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z')}`;
}

/** The whole seconds strictly between two instants: the spec times of a 1 s interval schedule. */
export function secondsBetween(fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let t = Math.floor(fromMs / 1000) * 1000 + 1000; t < toMs; t += 1000) out.push(t);
  return out;
}

/** When the run a schedule started for spec time `at` began, or undefined when it started none. */
export async function startedFor(client: Client, baseWorkflowId: string, at: number): Promise<number | undefined> {
  try {
    return (await client.workflow.getHandle(expectedId(baseWorkflowId, new Date(at))).describe()).startTime.getTime();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

export function actionIds(d: ScheduleDescription): string[] {
  return d.info.recentActions.map((a) => a.action.workflow.workflowId);
}

export interface ScheduleSuite {
  readonly env: Env;
  /** Creates a schedule that is deleted when the file's tests are done. */
  create(opts: ScheduleOptions): Promise<ScheduleHandle>;
  /** A start-workflow action on the suite's task queue with a fresh workflow id. */
  action(
    workflowType: Workflow,
    args?: unknown[],
  ): { type: 'startWorkflow'; workflowType: Workflow; args: unknown[]; taskQueue: string; workflowId: string };
  replayAll(ids: string[]): Promise<void>;
  /** Pauses the schedule, releases every blocker it started, and replays them all. */
  releaseAndReplay(h: ScheduleHandle): Promise<void>;
}

export function scheduleSuite(): ScheduleSuite {
  let env: Env | undefined;
  let stopWorker: (() => void) | undefined;
  let worker: Promise<void> | undefined;
  const handles: ScheduleHandle[] = [];
  const current = () => {
    if (!env) throw new Error('the schedule suite is not set up');
    return env;
  };

  beforeAll(async () => {
    env = await createEnv({ workflowsPath: WORKFLOWS });
    const stopped = new Promise<void>((resolve) => (stopWorker = resolve));
    worker = env.withWorker(() => stopped);
  });

  afterAll(async () => {
    for (const h of handles) await h.delete().catch(() => undefined);
    stopWorker?.();
    await worker;
    await env?.teardown();
  });

  const replayAll = async (ids: string[]) => {
    for (const id of ids) await current().replay(current().client.workflow.getHandle(id));
  };

  return {
    get env() {
      return current();
    },
    async create(opts) {
      const h = await current().client.schedule.create(opts);
      handles.push(h);
      return h;
    },
    action(workflowType, args = []) {
      return {
        type: 'startWorkflow' as const,
        workflowType,
        args,
        taskQueue: current().taskQueue,
        workflowId: uid('wf'),
      };
    },
    replayAll,
    async releaseAndReplay(h) {
      await h.pause('test done');
      const d = await h.describe();
      for (const id of actionIds(d)) {
        const run = current().client.workflow.getHandle(id);
        if ((await run.describe()).status.name === 'RUNNING') await run.signal(releaseSignal);
        await run.result().catch(() => undefined);
      }
      await replayAll(actionIds(d));
    },
  };
}
