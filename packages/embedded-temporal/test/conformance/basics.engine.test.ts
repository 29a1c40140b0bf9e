import { createEnv, Env, uid } from './harness';
import { greet, counter, addSignal, doneSignal, totalQuery, setUpdate, sleeper } from './workflows/basics';
import * as activities from './activities/basics';

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/basics'), activities });
});
afterAll(async () => {
  await env?.teardown();
});

test('a workflow runs an activity and returns its result', async () => {
  const result = await env.withWorker(async () => {
    const h = await env.client.workflow.start(greet, {
      args: ['world'],
      taskQueue: env.taskQueue,
      workflowId: uid('greet'),
    });
    const r = await h.result();
    await env.replay(h);
    const types = (await h.fetchHistory()).events!.map((e) => e.eventType);
    expect(types).toEqual([1, 5, 6, 7, 10, 11, 12, 5, 6, 7, 2]);
    return r;
  });
  expect(result).toBe('hello world');
});

test('signals, queries and updates reach the workflow', async () => {
  await env.withWorker(async () => {
    const h = await env.client.workflow.start(counter, { taskQueue: env.taskQueue, workflowId: uid('counter') });
    await h.signal(addSignal, 2);
    await h.signal(addSignal, 3);
    expect(await h.query(totalQuery)).toBe(5);
    expect(await h.executeUpdate(setUpdate, { args: [10] })).toBe(5);
    const rejected = await h.executeUpdate(setUpdate, { args: [-1] }).catch((err) => err);
    expect(rejected.cause?.message).toBe('negative');
    expect(await h.query(totalQuery)).toBe(10);
    await h.signal(doneSignal);
    expect(await h.result()).toBe(10);
    // Queries still work on a closed workflow.
    expect(await h.query(totalQuery)).toBe(10);
    await env.replay(h);
  });
});

test('a query waits for a run whose first workflow task is delayed, or says the run is not ready', async () => {
  await env.withWorker(async () => {
    // Due within the query's deadline: it rides on the first workflow task (a query before any
    // task completed has nothing a worker could replay it on).
    const soon = await env.client.workflow.start(counter, {
      taskQueue: env.taskQueue,
      workflowId: uid('delayed'),
      startDelay: '1500ms',
    });
    const t0 = Date.now();
    expect(await soon.query(totalQuery)).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    // Due long after it: refused at once, as the real server does.
    const later = await env.client.workflow.start(counter, {
      taskQueue: env.taskQueue,
      workflowId: uid('delayed'),
      startDelay: '1h',
    });
    const err = await later.query(totalQuery).catch((e) => e);
    expect(String(err?.cause?.details ?? err?.cause?.message)).toMatch(/Workflow task is not scheduled yet/);
    await Promise.all([soon.terminate(), later.terminate()]);
  });
});

test('timers fire after their duration', async () => {
  await env.withWorker(async () => {
    const started = Date.now();
    const h = await env.client.workflow.start(sleeper, {
      args: [1500],
      taskQueue: env.taskQueue,
      workflowId: uid('sleep'),
    });
    expect(await h.result()).toBe('woke');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    await env.replay(h);
  });
});
