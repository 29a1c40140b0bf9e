// Activities for activities.engine.test.ts and time-skipping.engine.test.ts. They run in the
// test process, so they record what each attempt saw in module state the tests
// read back (keyed by workflow id, so tests never share entries).
import { Context, ApplicationFailure, CancelledFailure, CompleteAsyncError } from '@temporalio/activity';

export interface AttemptRecord {
  attempt: number;
  /** Wall-clock ms when the attempt started running in the worker. */
  at: number;
  heartbeatDetails: unknown;
  cancelled?: boolean;
}

export const attempts = new Map<string, AttemptRecord[]>();
/** Task tokens of activities that handed their completion to the test (CompleteAsyncError). */
export const asyncTokens = new Map<string, Uint8Array>();
/** Injected by the time-skipping test: TestWorkflowEnvironment.sleep. */
export const hooks: { envSleep?: (ms: number) => Promise<void> } = {};

/** Workflow id of the running activity (absent only for standalone activities, which we never run). */
function workflowId(): string {
  return Context.current().info.workflowExecution?.workflowId ?? '';
}

function record(): AttemptRecord {
  const info = Context.current().info;
  const r: AttemptRecord = { attempt: info.attempt, at: Date.now(), heartbeatDetails: info.heartbeatDetails };
  const list = attempts.get(workflowId()) ?? [];
  list.push(r);
  attempts.set(workflowId(), list);
  return r;
}

export async function noop(): Promise<string> {
  record();
  return 'ok';
}

export interface FailOptions {
  type?: string;
  nonRetryable?: boolean;
  nextRetryDelayMs?: number;
}

/** Fails the first `n` attempts, then returns the attempt number. */
export async function failTimes(n: number, opts: FailOptions = {}): Promise<number> {
  const { attempt } = record();
  if (attempt <= n) {
    throw ApplicationFailure.create({
      message: `attempt ${attempt} failed`,
      type: opts.type ?? 'Flaky',
      nonRetryable: opts.nonRetryable,
      nextRetryDelay: opts.nextRetryDelayMs,
    });
  }
  return attempt;
}

export async function throwNonRetryable(): Promise<never> {
  record();
  throw ApplicationFailure.nonRetryable('give up', 'Fatal');
}

/** Sleeps (cancellation-aware, so a worker shutdown or timeout ends it). */
export async function sleepy(ms: number): Promise<string> {
  record();
  await Context.current().sleep(ms);
  return 'slept';
}

/** Heartbeats "p<attempt>" once, then goes silent for `stallMs`. */
export async function heartbeatThenStall(stallMs: number): Promise<string> {
  const { attempt } = record();
  Context.current().heartbeat(`p${attempt}`);
  await Context.current().sleep(stallMs);
  return 'stalled';
}

/** Attempt 1 records progress and fails; later attempts return the progress they were handed. */
export async function heartbeatThenFail(): Promise<unknown> {
  const { attempt, heartbeatDetails } = record();
  if (attempt === 1) {
    Context.current().heartbeat('progress-1');
    throw ApplicationFailure.create({ message: 'fail after progress' });
  }
  return heartbeatDetails;
}

/** Heartbeats until the server tells it (through a heartbeat response) that it is cancelled. */
export async function heartbeatUntilCancelled(): Promise<string> {
  const r = record();
  try {
    for (;;) {
      Context.current().heartbeat('alive');
      await Context.current().sleep(100);
    }
  } catch (err) {
    if (err instanceof CancelledFailure) r.cancelled = true;
    throw err;
  }
}

/** Like heartbeatUntilCancelled, but answers the cancellation with a retryable failure. */
export async function failWhenCancelled(): Promise<string> {
  try {
    return await heartbeatUntilCancelled();
  } catch {
    throw ApplicationFailure.create({ message: 'failed instead of cancelling' });
  }
}

/** Hands its completion to the test: the test completes it with the task token or by id. */
export async function completeLater(): Promise<string> {
  record();
  asyncTokens.set(workflowId(), Context.current().info.taskToken);
  throw new CompleteAsyncError();
}

/** Sleeps in server time through TestWorkflowEnvironment.sleep (time-skipping test). */
export async function envSleep(ms: number): Promise<string> {
  record();
  if (!hooks.envSleep) throw new Error('hooks.envSleep is not set');
  await hooks.envSleep(ms);
  return 'env-slept';
}
