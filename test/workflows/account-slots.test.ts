// The account's slots workflow under a steady stream of grants: its history
// stays bounded (it continues as new at its limit) and its runs carry the longer
// workflow task timeout. Runs on the embedded engine.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createEnv, saveHistories, worker } from './env';
import { slotsQuery } from '../../workflows/account-slots';
import type { SlotsState } from '../../workflows/account-slots';

// About 10 s alone; a machine shared with another test run once took it past jest's 60 s.
jest.setTimeout(180_000);
let env: TestWorkflowEnvironment;
const taskQueue = `slots-${randomUUID()}`;
const EventType = temporal.api.enums.v1.EventType;

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

test('a steady stream of grants still continues as new at the history bound, with the longer task timeout', async () => {
  const w = await worker(env, taskQueue, {});
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const createdAt = new Date().toISOString();
    // Tasks that do not exist: each grant fails and frees its slot at once, so
    // slots keep coming free while grants are delivered (the soak's pattern).
    const waiting = Array.from({ length: 200 }, (_, i) => ({ taskId: `gone-${String(i).padStart(3, '0')}`, createdAt }));
    const maxHistoryEvents = 100;
    const initial: SlotsState = { account, limit: 2, holders: {}, waiting, maxHistoryEvents };
    const first = await env.client.workflow.start('accountSlots', { taskQueue, workflowId: `slots:${account}`, args: [initial] });
    const current = env.client.workflow.getHandle(first.workflowId);
    for (let i = 0; i < 300 && (await current.describe()).runId === first.firstExecutionRunId; i++) await new Promise((r) => setTimeout(r, 100));

    const history = await env.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId).fetchHistory();
    const events = history.events ?? [];
    expect(events[events.length - 1].eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    // One pass past the bound at most: a batch of `limit` grants and its workflow tasks.
    expect(events.length).toBeLessThanOrEqual(maxHistoryEvents + 20);
    const latest = await current.describe();
    expect(latest.runId).not.toBe(first.firstExecutionRunId);
    expect(Number(latest.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
    // The queue carried over and keeps draining in the runs that follow.
    // A query waits for a worker to run it; under load one can time out while the worker replays a
    // run that just continued as new: that is "not drained yet", and the poll asks again.
    const waitingNow = () => current.query(slotsQuery).then((q) => q.waiting.length, (err: Error) => {
      if (!/DEADLINE_EXCEEDED|timed out/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`)) throw err;
      return -1;
    });
    for (let i = 0; i < 300 && (await waitingNow()) !== 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await current.query(slotsQuery)).waiting).toEqual([]);
    await current.terminate('test over');
    await saveHistories('bounded-grants', env.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId));
  });
});
