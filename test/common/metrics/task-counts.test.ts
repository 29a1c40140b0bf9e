// Tasks by status from visibility counts: the queries, runs closed from
// outside counted by their execution status, the cache, and a Temporal that
// does not answer (the statuses are left out, within the deadline).
import {
  combineCounts,
  TASK_COUNT_QUERIES,
  TaskCounts,
  type CountFn,
  type CountResult,
} from '../../../src/common/metrics/task-counts';

const n = (count: number, groups: CountResult['groups'] = []): CountResult => ({ count, groups });

test('open statuses count open runs only; final ones by TaskStatus; the strays query groups by execution status', () => {
  expect(TASK_COUNT_QUERIES.queued).toBe(
    `WorkflowType = 'agentTask' AND ExecutionStatus = 'Running' AND TaskStatus = 'queued'`,
  );
  expect(TASK_COUNT_QUERIES.completed).toBe(`WorkflowType = 'agentTask' AND TaskStatus = 'completed'`);
  expect(TASK_COUNT_QUERIES.strays).toMatch(
    /ExecutionStatus != 'Running' AND TaskStatus IN \('queued', 'running', 'input_required'\) GROUP BY ExecutionStatus$/,
  );
});

test('a run terminated, timed out or cancelled from outside counts as failed or cancelled; a continued-as-new run not at all', () => {
  const strays = n(9, [
    { value: 'Terminated', count: 2 },
    { value: 'TimedOut', count: 1 },
    { value: 'Canceled', count: 3 },
    { value: 'ContinuedAsNew', count: 5 },
  ]);
  expect(
    combineCounts({
      queued: n(1),
      running: n(2),
      input_required: n(1),
      completed: n(10),
      failed: n(4),
      cancelled: n(0),
      strays,
    }),
  ).toEqual({
    queued: 1,
    running: 2,
    input_required: 1,
    completed: 10,
    failed: 7,
    cancelled: 3,
  });
});

/** A count function answering `count` for every query, and counting its calls. */
function fakeCount(answer: (query: string) => Promise<CountResult>): CountFn & { calls: number } {
  const fn = Object.assign(
    async (q: string) => {
      fn.calls++;
      return answer(q);
    },
    { calls: 0 },
  );
  return fn;
}

test('counts are kept for the ttl: scrapes within it ask Temporal once', async () => {
  let now = 1_000;
  const count = fakeCount(async (q) => n(q.includes("'completed'") ? 5 : 0));
  const counts = new TaskCounts(count, { ttlMs: 5000, now: () => now });
  expect(await counts.get()).toEqual({
    queued: 0,
    running: 0,
    input_required: 0,
    completed: 5,
    failed: 0,
    cancelled: 0,
  });
  const asked = count.calls;
  expect(asked).toBe(Object.keys(TASK_COUNT_QUERIES).length);
  now += 4_000;
  await counts.get();
  expect(count.calls).toBe(asked);
  now += 2_000;
  await counts.get();
  expect(count.calls).toBe(2 * asked);
});

test('a Temporal that does not answer leaves the counts out within the deadline, and one that fails too', async () => {
  // The count never answers: without the deadline, get() would hang until the test's timeout.
  const never = fakeCount(() => new Promise<never>(() => undefined));
  const hanging = new TaskCounts(never, { timeoutMs: 100 });
  expect(await hanging.get()).toBeUndefined();
  expect(never.calls).toBeGreaterThan(0);
  const failing = new TaskCounts(fakeCount(async () => Promise.reject(new Error('UNAVAILABLE'))));
  expect(await failing.get()).toBeUndefined();
});
