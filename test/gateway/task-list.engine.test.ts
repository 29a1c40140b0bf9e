// GET /tasks's listing on the engine, in the moment between a run setting its end (TaskStatus
// completed, upserted with the workflow task that ends the loop) and Temporal recording the close
// (after the run has cached and published its end): the listing shows such a run as running, as
// GET /tasks/{id} does, and its status filters agree. A run held in that moment here by a
// publishEnd that waits for the test.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, worker } from '../workflows/env';
import { fakeActivities, recorder } from '../workflows/fake-activities';
import { input, TaskHandles } from '../workflows/task-handles';
import { listTasks, shownStatus, statusClause } from '../../src/gateway/services/task-list';
import { taskStartMeta } from '../../src/common/tasks/task-input';
import { compileVisibilityQuery } from '../../packages/embedded-temporal/src/visibility/query';
import { SEARCH_ATTRIBUTES, TASK_STATUSES } from '../../workflows/types';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(90_000);
const Exec = temporal.api.enums.v1.WorkflowExecutionStatus;
let env: TestWorkflowEnvironment;
const taskQueue = `list-${randomUUID()}`;
const rec = recorder();
const { statusBecomes } = new TaskHandles(() => env, taskQueue);

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

test('a run whose end is set but not yet recorded lists as running, and each status filter agrees', async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const fakes = fakeActivities(() => env, taskQueue, rec);
  const activities = {
    ...fakes,
    async publishEnd(i: Parameters<typeof fakes.publishEnd>[0]) {
      await released;
      return fakes.publishEnd(i);
    },
  };
  const account = `acct-${randomUUID()}`;
  const i = input('hello', { account });
  const w = await worker(env, taskQueue, activities);
  await w.runUntil(async () => {
    const h = await env.client.workflow.start('agentTask', {
      taskQueue,
      workflowId: i.taskId,
      args: [i],
      ...taskStartMeta(i),
    });
    await statusBecomes(h, 'completed');
    // Visibility has the upserted end (the real server's may trail a moment).
    const raw = `${SEARCH_ATTRIBUTES.account} = '${account}' AND ${SEARCH_ATTRIBUTES.status} = 'completed'`;
    await waitUntil('the end in visibility', async () => {
      for await (const _ of env.client.workflow.list({ query: raw })) return true;
      return false;
    });
    const list = (status?: (typeof TASK_STATUSES)[number]) =>
      listTasks(env.client, 'default', account, { limit: 10, ...(status && { status }) });
    expect((await list()).tasks.map((t) => t.status)).toEqual(['running']);
    expect((await list('running')).tasks.map((t) => t.task_id)).toEqual([i.taskId]);
    expect((await list('completed')).tasks).toEqual([]);

    release();
    await h.result();
    const done = await waitUntil(
      'the close in visibility',
      () => list('completed'),
      (p) => p.tasks.length === 1,
    );
    expect(done.tasks[0]).toMatchObject({ task_id: i.taskId, status: 'completed' });
    expect((await list('running')).tasks).toEqual([]);
    expect((await list()).tasks.map((t) => t.status)).toEqual(['completed']);
  });
});

test('shownStatus: a close from outside decides an unfinished status; an open run is never shown finished', () => {
  expect(shownStatus('completed', Exec.WORKFLOW_EXECUTION_STATUS_RUNNING)).toBe('running');
  expect(shownStatus('queued', Exec.WORKFLOW_EXECUTION_STATUS_RUNNING)).toBe('queued');
  expect(shownStatus('running', Exec.WORKFLOW_EXECUTION_STATUS_TERMINATED)).toBe('failed');
  expect(shownStatus('queued', Exec.WORKFLOW_EXECUTION_STATUS_TIMED_OUT)).toBe('failed');
  expect(shownStatus('running', Exec.WORKFLOW_EXECUTION_STATUS_CANCELED)).toBe('cancelled');
  expect(shownStatus('cancelled', Exec.WORKFLOW_EXECUTION_STATUS_FAILED)).toBe('cancelled');
  expect(shownStatus('completed', Exec.WORKFLOW_EXECUTION_STATUS_COMPLETED)).toBe('completed');
});

test('each status filter is a query the engine compiles, and finds exactly the runs shownStatus shows as that status', () => {
  const attrs = new Map(Object.values(SEARCH_ATTRIBUTES).map((n) => [n, 'Keyword' as const]));
  const execs = ['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;
  const code: Record<(typeof execs)[number], number> = {
    Running: Exec.WORKFLOW_EXECUTION_STATUS_RUNNING,
    Completed: Exec.WORKFLOW_EXECUTION_STATUS_COMPLETED,
    Failed: Exec.WORKFLOW_EXECUTION_STATUS_FAILED,
    Canceled: Exec.WORKFLOW_EXECUTION_STATUS_CANCELED,
    Terminated: Exec.WORKFLOW_EXECUTION_STATUS_TERMINATED,
    TimedOut: Exec.WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
  };
  for (const filter of TASK_STATUSES) {
    const q = compileVisibilityQuery(statusClause(filter), attrs);
    for (const listed of TASK_STATUSES)
      for (const exec of execs) {
        const record = { status: exec, searchAttributes: { [SEARCH_ATTRIBUTES.status]: listed } } as never;
        // A closed run whose own end was never set finished another way than it says: only the
        // closes from outside (and a workflow failure) stand for it.
        const shown = shownStatus(listed, code[exec]);
        expect([filter, listed, exec, q.matches(record)]).toEqual([filter, listed, exec, shown === filter]);
      }
  }
});
