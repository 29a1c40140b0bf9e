// The account's slots workflow under a steady stream of grants: its history
// stays bounded (it continues as new at its limit) and its runs carry the longer
// workflow task timeout; and under a steady stream of signals it still checks
// its holders' runs on schedule.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createEnv, replayingWorker, saveHistories, worker } from './env';
import { createRunActivities } from '../../activities/runs';
import type { SlotsState } from '../../workflows/account-slots';
import { waitUntil } from '../support/wait-until';
import { acquireSignal, releaseSignal, slotsQuery } from '../../workflows/definitions';

// About 10 s alone; on a machine shared with other test runs it has taken minutes.
// Every wait below polls against one deadline well inside jest's timeout: a slow
// machine then fails the wait, saying what it waited for (or passes late), never
// jest's timer, which would leave the worker running into the next suite of this jest process.
const TEST_TIMEOUT_MS = 330_000;
const WAIT_BUDGET_MS = 240_000;
jest.setTimeout(TEST_TIMEOUT_MS);
let env: TestWorkflowEnvironment;
const taskQueue = `slots-${randomUUID()}`;
const EventType = temporal.api.enums.v1.EventType;

beforeAll(async () => {
  env = await createEnv();
}, TEST_TIMEOUT_MS);
afterAll(async () => {
  await env?.teardown();
}, TEST_TIMEOUT_MS);

/**
 * Reads until `done` holds, within what is left of the test's budget (`deadline`). Each read
 * gets a gRPC deadline of its own, so one call to a busy engine cannot outlast the budget; a
 * read that fails (one that timed out, a query while the worker replays) is "not yet".
 */
function pollUntil<T>(what: string, deadline: number, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const perRead = () =>
    env.connection.withDeadline(Date.now() + Math.max(1000, Math.min(15_000, deadline - Date.now())), read);
  // At least one read once the deadline has come (a read that cannot answer in time is not waited for).
  return waitUntil(what, perRead, done, { timeoutMs: Math.max(1000, deadline - Date.now()) });
}

/** A worker whose slots workflows check their holders' runs for real (the closedRuns activity). */
const checkingWorker = () =>
  worker(env, taskQueue, { closedRuns: createRunActivities({ temporal: env.client } as never).closedRuns });

/** The account's slots workflow, started with `initial` on `queue`. */
const startSlots = (queue: string, initial: SlotsState) =>
  env.client.workflow.start('accountSlots', {
    taskQueue: queue,
    workflowId: `slots:${initial.account}`,
    args: [initial],
  });

test('a steady stream of grants still continues as new at the history bound, with the longer task timeout', async () => {
  const w = await worker(env, taskQueue, {});
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const createdAt = new Date().toISOString();
    // Tasks that do not exist: each grant fails and frees its slot at once, so
    // slots keep coming free while grants are delivered (the soak's pattern).
    const waiting = Array.from({ length: 60 }, (_, i) => ({ taskId: `gone-${String(i).padStart(3, '0')}`, createdAt }));
    const maxHistoryEvents = 100;
    const initial: SlotsState = { account, limit: 2, holders: {}, waiting, maxHistoryEvents };
    const deadline = Date.now() + WAIT_BUDGET_MS;
    const first = await startSlots(taskQueue, initial);
    const current = env.client.workflow.getHandle(first.workflowId);
    const continued = await pollUntil(
      'the slots workflow to continue as new',
      deadline,
      () => current.describe(),
      (d) => d.runId !== first.firstExecutionRunId,
    );
    expect(continued.runId).not.toBe(first.firstExecutionRunId);

    const history = await env.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId).fetchHistory();
    const events = history.events ?? [];
    expect(events[events.length - 1].eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // One pass past the bound at most: a batch of `limit` grants and its workflow tasks.
    expect(events.length).toBeLessThanOrEqual(maxHistoryEvents + 20);
    const latest = await current.describe();
    expect(latest.runId).not.toBe(first.firstExecutionRunId);
    expect(Number(latest.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
    // The queue carried over and keeps draining in the runs that follow. A query waits for a
    // worker to run it; under load one can time out while the worker replays a run that just
    // continued as new: that is "not drained yet", and the poll asks again.
    const drained = await pollUntil(
      'the queue carried over to drain',
      deadline,
      () => current.query(slotsQuery),
      (q) => q.waiting.length === 0,
    );
    expect(drained.waiting).toEqual([]);
    await current.terminate('test over');
    await saveHistories('bounded-grants', env.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId));
  });
});

test('a busy account still checks its holders: a holder whose run is gone loses its slot while signals keep coming', async () => {
  const w = await checkingWorker();
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    // A holder with no run (as after a terminate its session did not report), a check due every 2 s,
    // and a signal every 200 ms: a check that waited for a quiet spell of 2 s would never come.
    const initial: SlotsState = {
      account,
      limit: 1,
      watchMs: 2000,
      holders: { 'gone-holder': Date.now() },
      waiting: [],
    };
    const slots = await startSlots(taskQueue, initial);
    // Each read keeps the stream going (five signals, 200 ms apart: part of the scenario), then asks who holds a slot.
    let i = 0;
    const running = await waitUntil(
      'the gone holder to lose its slot while signals keep coming',
      async () => {
        for (let k = 0; k < 5; k++) {
          await slots.signal(releaseSignal, { taskId: `nobody-${i++}` });
          await new Promise((r) => setTimeout(r, 200));
        }
        return (await slots.query(slotsQuery)).running;
      },
      (holders) => !holders.includes('gone-holder'),
      { timeoutMs: WAIT_BUDGET_MS, stepMs: 0 },
    );
    expect(running).toEqual([]);
    await slots.terminate('test over');
    await saveHistories('busy-check', slots);
  });
});

test('asks and releases arriving together replay at every workflow task (a worker that keeps no run)', async () => {
  const replayQueue = `slots-replay-${randomUUID()}`;
  const w = await replayingWorker(env, replayQueue, {}, 0);
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const initial: SlotsState = { account, limit: 4, holders: {}, waiting: [] };
    const slots = await startSlots(replayQueue, initial);
    const createdAt = new Date().toISOString();
    const slot = (taskId: string) => ({ taskId, limit: 4, createdAt });
    // Rounds of asks racing releases (tasks with no run: each grant fails and frees its slot again,
    // while the holders' check keeps its timer): each workflow task is a fresh replay of the whole history.
    for (let round = 0; round < 3; round++) {
      const ids = Array.from({ length: 6 }, (_, k) => `r${round}-${k}`);
      await Promise.all([
        ...ids.map((id) => slots.signal(acquireSignal, slot(id))),
        ...ids.slice(0, 2).map((taskId) => slots.signal(releaseSignal, { taskId })),
      ]);
    }
    // Each read gets 5 s and one that goes unanswered counts as "not yet": a worker that keeps no
    // run evicts it after every task, and SDK core can lose a query task that arrives, beside the
    // next workflow task, while it evicts (its buffer hands on the workflow task only; seen on a
    // loaded machine: the query went unanswered for good).
    const q = await waitUntil(
      'every slot given back',
      () => env.client.connection.withDeadline(Date.now() + 5000, () => slots.query(slotsQuery)).catch(() => undefined),
      (v) => v !== undefined && v.running.length === 0 && v.waiting.length === 0,
    );
    expect(q?.running).toEqual([]);
    // Still running: a nondeterminism would have failed it (the replaying worker fails runs on one).
    expect((await slots.describe()).status.name).toBe('RUNNING');
    await slots.terminate('test over');
    await saveHistories('asks-replayed', slots);
  });
});
