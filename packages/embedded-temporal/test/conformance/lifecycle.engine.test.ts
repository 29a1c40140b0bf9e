// Chains of runs: continue-as-new, workflow retry policies, cron schedules, and
// run/execution timeouts (also across continue-as-new).
import { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, RetryPolicy, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { createEnv, Env, JAVA_TEST_SERVER, uid } from './harness';
import {
  chain,
  endless,
  shortRuns,
  flaky,
  fatal,
  typedFailure,
  hangsFirst,
  waitForever,
  cronJob,
} from './workflows/lifecycle';

const ET = temporal.api.enums.v1.EventType;
const Initiator = temporal.api.enums.v1.ContinueAsNewInitiator;
const RetryState = temporal.api.enums.v1.RetryState;
type Event = temporal.api.history.v1.IHistoryEvent;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/lifecycle') });
});
afterAll(async () => {
  await env?.teardown();
});

interface Run {
  runId: string;
  events: Event[];
  handle: WorkflowHandle;
}

/** Every run of a chain, first to last, following the close events' newExecutionRunId. */
async function runsOf(e: Env, workflowId: string, firstRunId: string): Promise<Run[]> {
  const runs: Run[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const handle: WorkflowHandle = e.client.workflow.getHandle(workflowId, runId);
    const events: Event[] = (await handle.fetchHistory()).events!;
    runs.push({ runId, events, handle });
    const last: Event = events[events.length - 1];
    runId =
      last.workflowExecutionCompletedEventAttributes?.newExecutionRunId ||
      last.workflowExecutionFailedEventAttributes?.newExecutionRunId ||
      last.workflowExecutionTimedOutEventAttributes?.newExecutionRunId ||
      last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ||
      undefined;
  }
  return runs;
}

function started(r: Run): temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes {
  return r.events[0].workflowExecutionStartedEventAttributes!;
}

function ms(d: { seconds?: Long | number | null; nanos?: number | null } | null | undefined): number {
  return d ? Number(d.seconds ?? 0) * 1000 + Math.floor((d.nanos ?? 0) / 1e6) : 0;
}

function eventMs(e: Event): number {
  return ms(e.eventTime);
}

describe('continue-as-new', () => {
  test('a chain is followed by result(), each run continuing from the previous with new input', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('chain');
      const h = await env.client.workflow.start(chain, { args: [3, []], taskQueue: env.taskQueue, workflowId });
      const result = await h.result();
      expect(result.visited).toEqual([3, 2, 1]);
      expect(result.firstRunId).toBe(h.firstExecutionRunId);
      const runs = await runsOf(env, workflowId, h.firstExecutionRunId);
      expect(runs).toHaveLength(4);
      expect(result.runId).toBe(runs[3].runId);
      expect(result.continuedFrom).toBe(runs[2].runId);
      for (let i = 1; i < runs.length; i++) {
        const a = started(runs[i]);
        expect(a.continuedExecutionRunId).toBe(runs[i - 1].runId);
        expect(a.firstExecutionRunId).toBe(h.firstExecutionRunId);
        expect(a.initiator).toBe(Initiator.CONTINUE_AS_NEW_INITIATOR_WORKFLOW);
        expect(runs[i - 1].events.at(-1)!.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
        // The server keeps runs of a chain at least a second apart (workflowIdReuseMinimalInterval).
        const prevExec = eventMs(runs[i - 1].events[0]) + ms(started(runs[i - 1]).firstWorkflowTaskBackoff);
        const thisExec = eventMs(runs[i].events[0]) + ms(a.firstWorkflowTaskBackoff);
        expect(thisExec - prevExec).toBeGreaterThanOrEqual(990);
      }
      expect((await h.describe()).runId).toBe(runs[3].runId);
      for (const r of runs) await env.replay(r.handle);
    });
  });
});

describe('workflow retry policy', () => {
  test('a failing workflow is retried with growing attempt numbers until it succeeds', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('retry');
      const h = await env.client.workflow.start(flaky, {
        args: [3],
        taskQueue: env.taskQueue,
        workflowId,
        retry: { initialInterval: '200ms', backoffCoefficient: 1, maximumAttempts: 5 },
      });
      expect(await h.result()).toBe(3);
      const runs = await runsOf(env, workflowId, h.firstExecutionRunId);
      expect(runs.map((r) => started(r).attempt)).toEqual([1, 2, 3]);
      for (const r of runs.slice(0, 2)) {
        const failed = r.events.at(-1)!.workflowExecutionFailedEventAttributes!;
        expect(failed.retryState).toBe(RetryState.RETRY_STATE_IN_PROGRESS);
        expect(failed.failure?.message).toMatch(/^attempt \d failed$/);
      }
      const last = started(runs[2]);
      expect(last.initiator).toBe(Initiator.CONTINUE_AS_NEW_INITIATOR_RETRY);
      expect(last.continuedFailure?.message).toBe('attempt 2 failed');
      expect(last.firstExecutionRunId).toBe(h.firstExecutionRunId);
      for (const r of runs) await env.replay(r.handle);
    });
  });

  test('retries stop at maximumAttempts', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(flaky, {
        args: [10],
        taskQueue: env.taskQueue,
        workflowId: uid('retry-max'),
        retry: { initialInterval: '100ms', maximumAttempts: 2 },
      });
      const err = await h.result().catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(err.retryState).toBe('MAXIMUM_ATTEMPTS_REACHED');
      expect(err.cause).toBeInstanceOf(ApplicationFailure);
      expect(err.cause.message).toBe('attempt 2 failed');
      const runs = await runsOf(env, h.workflowId, h.firstExecutionRunId);
      expect(runs).toHaveLength(2);
      for (const r of runs) await env.replay(r.handle);
    });
  });

  test('non-retryable failures and non-retryable error types are not retried', async () => {
    await env.withWorker(async () => {
      const retry: RetryPolicy = {
        initialInterval: '100ms',
        maximumAttempts: 5,
        nonRetryableErrorTypes: ['Permanent'],
      };
      const a = await env.client.workflow.start(fatal, {
        taskQueue: env.taskQueue,
        workflowId: uid('non-retryable'),
        retry,
      });
      const errA = await a.result().catch((e) => e);
      expect(errA.retryState).toBe('NON_RETRYABLE_FAILURE');
      expect(errA.cause.type).toBe('Fatal');
      const b = await env.client.workflow.start(typedFailure, {
        args: ['Permanent'],
        taskQueue: env.taskQueue,
        workflowId: uid('non-retryable-type'),
        retry,
      });
      const errB = await b.result().catch((e) => e);
      expect(errB.retryState).toBe('NON_RETRYABLE_FAILURE');
      for (const h of [a, b]) {
        const runs = await runsOf(env, h.workflowId, h.firstExecutionRunId);
        expect(runs).toHaveLength(1);
        await env.replay(h);
      }
    });
  });

  test('without a retry policy a failure is final', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(flaky, {
        args: [2],
        taskQueue: env.taskQueue,
        workflowId: uid('no-retry'),
      });
      const err = await h.result().catch((e) => e);
      expect(err.retryState).toBe('RETRY_POLICY_NOT_SET');
      expect(await runsOf(env, h.workflowId, h.firstExecutionRunId)).toHaveLength(1);
      await env.replay(h);
    });
  });
});

describe('timeouts', () => {
  test('a run timeout fails the workflow with a start-to-close TimeoutFailure', async () => {
    await env.withWorker(async () => {
      const started = Date.now();
      const h = await env.client.workflow.start(waitForever, {
        taskQueue: env.taskQueue,
        workflowId: uid('run-timeout'),
        workflowRunTimeout: '1s',
      });
      const err = await h.result().catch((e) => e);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(err.cause).toBeInstanceOf(TimeoutFailure);
      expect(err.cause.timeoutType).toBe(TimeoutType.START_TO_CLOSE);
      expect(err.retryState).toBe('RETRY_POLICY_NOT_SET');
      expect((await h.describe()).status.name).toBe('TIMED_OUT');
      await env.replay(h);
    });
  });

  test('an execution timeout fails the workflow with retry state TIMEOUT', async () => {
    await env.withWorker(async () => {
      const h = await env.client.workflow.start(waitForever, {
        taskQueue: env.taskQueue,
        workflowId: uid('exec-timeout'),
        workflowExecutionTimeout: '1s',
      });
      const err = await h.result().catch((e) => e);
      expect(err.cause).toBeInstanceOf(TimeoutFailure);
      expect(err.retryState).toBe('TIMEOUT');
      await env.replay(h);
    });
  });

  // A run timeout of 3 s: the second attempt must finish within it, also on a loaded machine.
  test('a timed-out run is retried under the retry policy', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('timeout-retry');
      const h = await env.client.workflow.start(hangsFirst, {
        taskQueue: env.taskQueue,
        workflowId,
        workflowRunTimeout: '3s',
        retry: { initialInterval: '100ms', maximumAttempts: 3 },
      });
      expect(await h.result()).toBe('attempt 2 after workflow timeout');
      const runs = await runsOf(env, workflowId, h.firstExecutionRunId);
      expect(runs).toHaveLength(2);
      expect(runs[0].events.at(-1)!.workflowExecutionTimedOutEventAttributes?.retryState).toBe(
        RetryState.RETRY_STATE_IN_PROGRESS,
      );
      expect(started(runs[1]).continuedFailure?.timeoutFailureInfo?.timeoutType).toBe(
        temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE,
      );
      for (const r of runs) await env.replay(r.handle);
    });
  });

  test('the execution timeout spans continue-as-new', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('exec-timeout-can');
      // Runs of 200 ms that continue as new for ever: only a timeout that spans the chain ends
      // it (one that restarted with each run never would, and jest's timeout would end the test).
      const h = await env.client.workflow.start(endless, {
        args: [0],
        taskQueue: env.taskQueue,
        workflowId,
        workflowExecutionTimeout: '3s',
      });
      const err = await h.result().catch((e) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(err.cause).toBeInstanceOf(TimeoutFailure);
      const runs = await runsOf(env, workflowId, h.firstExecutionRunId);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      const timedOut = runs.at(-1)!.events.at(-1)!;
      expect(timedOut.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT);
      // Every run carries the first run's deadline, and the chain ended at it (the server's times).
      const expiry = started(runs[0]).workflowExecutionExpirationTime;
      for (const r of runs) expect(ms(started(r).workflowExecutionExpirationTime)).toBe(ms(expiry));
      expect(eventMs(timedOut) - eventMs(runs[0].events[0])).toBeGreaterThanOrEqual(2900);
      for (const r of runs) await env.replay(r.handle);
    });
  });

  test('the run timeout applies to each run of a chain, not to the chain', async () => {
    await env.withWorker(async () => {
      const workflowId = uid('run-timeout-can');
      const h = await env.client.workflow.start(shortRuns, {
        args: [2],
        taskQueue: env.taskQueue,
        workflowId,
        workflowRunTimeout: '2s',
      });
      // Three runs of ~1 s each (minimal run spacing) outlast one run timeout.
      expect(await h.result()).toBe(1);
      const runs = await runsOf(env, workflowId, h.firstExecutionRunId);
      expect(runs).toHaveLength(3);
      expect(eventMs(runs[2].events.at(-1)!) - eventMs(runs[0].events[0])).toBeGreaterThan(2000);
      for (const r of runs) expect(ms(started(r).workflowRunTimeout)).toBe(2000);
      for (const r of runs) await env.replay(r.handle);
    });
  });
});

describe('cron schedules (time skipping)', () => {
  let ts: Env;
  beforeAll(async () => {
    ts = await createEnv({ workflowsPath: require.resolve('./workflows/lifecycle'), timeSkipping: true });
  });
  afterAll(async () => {
    await ts?.teardown();
  });

  // The real server's cron semantics (each run completes or fails naming the next run,
  // whose initiator is CRON_SCHEDULE). The Java test server has its own older model
  // (a run ends as continued-as-new, initiator unset), so this runs on ours only.
  (JAVA_TEST_SERVER ? test.skip : test)(
    'runs start on schedule, see the last result and failure, and the chain ends when terminated',
    async () => {
      await ts.withWorker(async () => {
        const workflowId = uid('cron');
        const h = await ts.client.workflow.start(cronJob, {
          taskQueue: ts.taskQueue,
          workflowId,
          cronSchedule: '* * * * *',
        });
        // Four runs at whole minutes: the fourth is due up to 4 minutes after the start (a start just past a
        // whole minute), so wait half a minute more for it to have finished.
        await ts.env!.sleep('270s');
        const runs = await runsOf(ts, workflowId, h.firstExecutionRunId);
        expect(runs.length).toBeGreaterThanOrEqual(4);
        const closed = runs.slice(0, 4);
        // First run waits for the next whole minute; so does every later one.
        for (const r of runs) {
          const a = started(r);
          expect(a.cronSchedule).toBe('* * * * *');
          expect(a.initiator).toBe(Initiator.CONTINUE_AS_NEW_INITIATOR_CRON_SCHEDULE);
          const exec = eventMs(r.events[0]) + ms(a.firstWorkflowTaskBackoff);
          expect(exec % 60_000).toBeLessThan(1000);
          expect(ms(a.firstWorkflowTaskBackoff)).toBeLessThanOrEqual(60_000);
        }
        expect(started(runs[1]).continuedExecutionRunId).toBe(runs[0].runId);
        const results = closed.map((r) => r.events.at(-1)!);
        expect(results[0].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
        expect(results[1].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
        expect(results[1].workflowExecutionFailedEventAttributes?.newExecutionRunId).toBe(runs[2].runId);
        expect(results[2].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
        expect(results[3].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
        const decode = (e: Event) =>
          JSON.parse(Buffer.from(e.workflowExecutionCompletedEventAttributes!.result!.payloads![0].data!).toString());
        expect(decode(results[0])).toBe('1:* * * * *:');
        // The run after a failure gets the last success's result and the failure.
        expect(decode(results[2])).toBe('2:* * * * *:second run fails');
        expect(decode(results[3])).toBe('3:* * * * *:');
        // Runs follow one another a minute apart.
        const execTimes = closed.map((r) => eventMs(r.events[0]) + ms(started(r).firstWorkflowTaskBackoff));
        for (let i = 1; i < execTimes.length; i++)
          expect(Math.round((execTimes[i] - execTimes[i - 1]) / 60_000)).toBe(1);
        await h.terminate('cron over');
        expect((await h.describe()).status.name).toBe('TERMINATED');
        for (const r of await runsOf(ts, workflowId, h.firstExecutionRunId)) await ts.replay(r.handle);
      });
    },
  );
});
