// The background confirmation of cached statuses: at most one describe a task
// a second, one at a time, and all tasks together within one budget.
import { StatusRevalidator } from '../../src/gateway/services/status-revalidation';
import type { TaskView } from '../../workflows/types';

const view = (task_id: string): TaskView => ({ task_id, status: 'running' }) as TaskView;

function setup(perSecond = 20, maxTracked?: number) {
  let clock = 1_000_000;
  const asked: string[] = [];
  const pending: Array<() => void> = [];
  const r = new StatusRevalidator(perSecond, () => clock, maxTracked);
  const confirm = (v: TaskView) => {
    asked.push(v.task_id);
    return new Promise<TaskView & { attempt?: number; last_error?: null }>((resolve) =>
      pending.push(() => resolve({ ...v, attempt: 3, last_error: null })),
    );
  };
  const settle = async () => {
    pending.splice(0).forEach((f) => f());
    await new Promise((r) => setImmediate(r));
  };
  return { r, asked, confirm, settle, tick: (ms: number) => (clock += ms) };
}

test('a task is asked about at most once a second, never twice at a time', async () => {
  const { r, asked, confirm, settle, tick } = setup();
  r.touch(view('task_a'), confirm);
  r.touch(view('task_a'), confirm);
  expect(asked).toEqual(['task_a']);
  tick(1500);
  r.touch(view('task_a'), confirm); // still in flight
  expect(asked).toEqual(['task_a']);
  await settle();
  expect(r.retries('task_a')).toEqual({ attempt: 3, last_error: null });
  r.touch(view('task_a'), confirm);
  expect(asked).toEqual(['task_a', 'task_a']);
  await settle();
  tick(300);
  r.touch(view('task_a'), confirm);
  expect(asked).toHaveLength(2);
});

test('all tasks share one budget a second; a task over it is asked on a later read', async () => {
  const { r, asked, confirm, settle, tick } = setup(5);
  for (let i = 0; i < 8; i++) r.touch(view(`task_${i}`), confirm);
  expect(asked).toEqual(['task_0', 'task_1', 'task_2', 'task_3', 'task_4']);
  await settle();
  // Skipped tasks were not marked as looked at: their next read, once budget is back, asks.
  tick(200); // one token back
  r.touch(view('task_5'), confirm);
  r.touch(view('task_6'), confirm);
  expect(asked.slice(5)).toEqual(['task_5']);
  tick(1000);
  r.touch(view('task_6'), confirm);
  r.touch(view('task_7'), confirm);
  expect(asked.slice(6)).toEqual(['task_6', 'task_7']);
});

test('a failed describe leaves the last retry fields and frees the task for its next look', async () => {
  const { r, tick } = setup();
  const asked: string[] = [];
  r.touch(view('task_x'), async (v) => {
    asked.push(v.task_id);
    throw new Error('unavailable');
  });
  await new Promise((res) => setImmediate(res));
  expect(r.retries('task_x')).toEqual({ attempt: null, last_error: null });
  tick(1000);
  r.touch(view('task_x'), async (v) => (asked.push(v.task_id), { ...v }));
  expect(asked).toEqual(['task_x', 'task_x']);
});

test('it remembers a bounded number of tasks: past the bound, the least recently asked about is forgotten', async () => {
  const { r, confirm, settle } = setup(100, 3);
  for (const id of ['task_1', 'task_2', 'task_3', 'task_4', 'task_5']) {
    r.touch(view(id), confirm);
    await settle();
    expect(r.size).toBeLessThanOrEqual(3);
  }
  expect(r.size).toBe(3);
  // The first two are forgotten (no retry fields kept), the last three remembered.
  expect(r.retries('task_1')).toEqual({ attempt: null, last_error: null });
  expect(r.retries('task_2')).toEqual({ attempt: null, last_error: null });
  expect(r.retries('task_5')).toEqual({ attempt: 3, last_error: null });
});
