// Workflows for activities.engine.test.ts and time-skipping.engine.test.ts. Deterministic code only.
// Each runs activities with options handed in by the test and reports what the
// workflow saw (result or failure chain), so the tests can assert on both the
// workflow's view and the history.
import {
  proxyActivities,
  proxyLocalActivities,
  sleep,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  TimeoutFailure,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type * as activities from '../activities/activities';

type Acts = typeof activities;
export type ActName = {
  [K in keyof Acts]: Acts[K] extends (...args: any[]) => Promise<unknown> ? K : never;
}[keyof Acts];

export interface FailureView {
  kind: string;
  message: string;
  retryState?: string;
  type?: string | null;
  nonRetryable?: boolean;
  timeoutType?: string;
  lastHeartbeatDetails?: unknown;
  cause?: FailureView;
}

export interface Outcome {
  ok?: unknown;
  failure?: FailureView;
}

function view(err: unknown): FailureView | undefined {
  if (!(err instanceof Error)) return undefined;
  const base: FailureView = { kind: 'Error', message: err.message };
  if (err instanceof ActivityFailure) Object.assign(base, { kind: 'ActivityFailure', retryState: err.retryState });
  else if (err instanceof ApplicationFailure)
    Object.assign(base, { kind: 'ApplicationFailure', type: err.type, nonRetryable: err.nonRetryable });
  else if (err instanceof TimeoutFailure)
    Object.assign(base, {
      kind: 'TimeoutFailure',
      timeoutType: err.timeoutType,
      lastHeartbeatDetails: err.lastHeartbeatDetails,
    });
  else if (err instanceof CancelledFailure) base.kind = 'CancelledFailure';
  const cause = view((err as { cause?: unknown }).cause);
  if (cause) base.cause = cause;
  return base;
}

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await p };
  } catch (err) {
    const failure = view(err);
    if (!failure) throw err;
    return { failure };
  }
}

export interface Step {
  name: ActName;
  args?: unknown[];
  options: ActivityOptions;
}

/** Runs the steps one after the other. */
export async function runActivities(steps: Step[]): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const s of steps) {
    const fn = proxyActivities<Acts>(s.options)[s.name] as (...a: unknown[]) => Promise<unknown>;
    out.push(await outcome(fn(...(s.args ?? []))));
  }
  return out;
}

export async function runActivity(step: Step): Promise<Outcome> {
  return (await runActivities([step]))[0];
}

/**
 * Starts the activity, cancels it after `afterMs` of workflow time, and reports how
 * it ended. With `thenSleepMs` the cancel goes out together with a timer, in one
 * workflow task completion.
 */
export async function cancelActivityAfter(step: Step, afterMs: number, thenSleepMs?: number): Promise<Outcome> {
  const fn = proxyActivities<Acts>(step.options)[step.name] as (...a: unknown[]) => Promise<unknown>;
  const scope = new CancellationScope();
  const result = outcome(scope.run(() => fn(...(step.args ?? []))));
  await sleep(afterMs);
  scope.cancel();
  if (thenSleepMs) {
    // Let the cancellation reach the SDK's command list before the timer does.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await sleep(thenSleepMs);
  }
  return await result;
}

export async function runLocalActivity(
  name: ActName,
  args: unknown[],
  options: LocalActivityOptions,
): Promise<Outcome> {
  const fn = proxyLocalActivities<Acts>(options)[name] as (...a: unknown[]) => Promise<unknown>;
  return await outcome(fn(...args));
}

/** Races an activity against a timer; reports which finished first. */
export async function activityVersusTimer(step: Step, timerMs: number): Promise<string[]> {
  const fn = proxyActivities<Acts>(step.options)[step.name] as (...a: unknown[]) => Promise<unknown>;
  const order: string[] = [];
  await Promise.all([
    fn(...(step.args ?? [])).then(() => order.push('activity')),
    sleep(timerMs).then(() => order.push('timer')),
  ]);
  return order;
}

export async function sleeper(ms: number): Promise<string> {
  await sleep(ms);
  return 'woke';
}
