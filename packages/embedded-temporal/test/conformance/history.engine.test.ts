// History: paging, long polls (wait for new events, close-event filter),
// following continue-as-new chains; updates while a workflow task is running;
// queries riding on workflow tasks and as legacy query tasks.
import { temporal } from '@temporalio/proto';
import * as activities from './activities/history';
import { createEnv, Env, uid } from './harness';
import { manyTimers, chain, updatable, bump, slowBump, release, value } from './workflows/history';

const ET = temporal.api.enums.v1.EventType;
const CLOSE = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/history'), activities });
});
afterAll(async () => {
  await env?.teardown();
});
const svc = () => env.connection.workflowService;

test('history pages join up to the whole history, in order, without gaps', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(manyTimers, {
      args: [20],
      taskQueue: env.taskQueue,
      workflowId: uid('pages'),
    });
    await h.result();
    const all: number[] = [];
    let token: Uint8Array | undefined;
    let pages = 0;
    do {
      const res = await svc().getWorkflowExecutionHistory({
        namespace: env.namespace,
        execution: { workflowId: h.workflowId },
        maximumPageSize: 7,
        nextPageToken: token,
      });
      all.push(...res.history!.events!.map((e) => Number(e.eventId)));
      token = res.nextPageToken?.length ? res.nextPageToken : undefined;
      pages++;
    } while (token);
    expect(all).toEqual(all.map((_, i) => i + 1));
    // The real server counts a page in stored batches (one per transaction), the
    // embedded engine in events: either way a long history comes in several pages.
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(all.length / 21));
    expect(pages).toBeLessThanOrEqual(Math.ceil(all.length / 7) + 1);
    expect(all.length).toBeGreaterThan(60);
    await env.replay(h);
  });
});

test('a long poll with waitNewEvent returns as soon as a new event is written', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(updatable, { taskQueue: env.taskQueue, workflowId: uid('longpoll') });
    await h.query(value); // first task done
    // With waitNewEvent, an open run's history always comes with a token to wait on.
    const first = await svc().getWorkflowExecutionHistory({
      namespace: env.namespace,
      execution: { workflowId: h.workflowId },
      waitNewEvent: true,
    });
    const n = first.history!.events!.length;
    const token = Buffer.from(first.nextPageToken ?? []);
    expect(token.length).toBeGreaterThan(0);
    const waiting = svc().getWorkflowExecutionHistory({
      namespace: env.namespace,
      execution: { workflowId: h.workflowId },
      waitNewEvent: true,
      nextPageToken: token,
    });
    const t0 = Date.now();
    setTimeout(() => void h.signal(release), 500);
    const res = await waiting;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    const ids = res.history!.events!.map((e) => Number(e.eventId));
    expect(ids[0]).toBe(n + 1);
    expect(await h.result()).toBe(0);
    await env.replay(h);
  });
});

test('the close-event filter waits for the close event only', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(updatable, { taskQueue: env.taskQueue, workflowId: uid('close') });
    setTimeout(() => void h.signal(release), 300);
    const res = await svc().getWorkflowExecutionHistory({
      namespace: env.namespace,
      execution: { workflowId: h.workflowId },
      waitNewEvent: true,
      historyEventFilterType: CLOSE,
    });
    const events = res.history!.events!;
    if (events.length === 0) {
      // Long poll expired before close (allowed); the next call must then get it.
      expect(res.nextPageToken?.length).toBeGreaterThan(0);
    } else {
      expect(events).toHaveLength(1);
      expect(events[0].eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    }
    await h.result();
    await env.replay(h);
  });
});

test('result() follows a continue-as-new chain to its last run', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(chain, { args: [3], taskQueue: env.taskQueue, workflowId: uid('chain') });
    expect(await h.result()).toBe('end of chain');
    const first = await env.client.workflow.getHandle(h.workflowId, h.firstExecutionRunId).fetchHistory();
    const last = first.events![first.events!.length - 1];
    expect(last.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    const desc = await env.client.workflow.getHandle(h.workflowId).describe();
    expect(desc.runId).not.toBe(h.firstExecutionRunId);
    await env.replay(env.client.workflow.getHandle(h.workflowId, h.firstExecutionRunId));
    await env.replay(env.client.workflow.getHandle(h.workflowId));
  });
});

test('updates admitted while a workflow task runs are delivered with the next task', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(updatable, { taskQueue: env.taskQueue, workflowId: uid('updates') });
    // Many concurrent updates: several arrive while another task is in flight.
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => h.executeUpdate(bump, { args: [n], updateId: `u${n}` })),
    );
    expect(results.sort((a, b) => a - b)).toHaveLength(5);
    expect(await h.query(value)).toBe(15);
    // An update that runs an activity: accepted first, completed later.
    const handle = await h.startUpdate(slowBump, { args: [10], waitForStage: 'ACCEPTED' as never, updateId: 'slow' });
    expect(await handle.result()).toBe(25);
    // Same update id again: the stored outcome, not a second execution.
    expect(await h.executeUpdate(slowBump, { args: [10], updateId: 'slow' })).toBe(25);
    await h.signal(release);
    expect(await h.result()).toBe(25);
    const hist = (await h.fetchHistory()).events!;
    expect(hist.filter((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)).toHaveLength(6);
    await env.replay(h);
  });
});
