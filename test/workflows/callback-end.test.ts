// A task's final callback delivery: the run's own, and the one its delivery
// workflow makes when Temporal says the run closed without sending it.
import { endDelivery, endFromOutside } from '../../workflows/callback-end';

const NOW = '2026-11-27T00:00:00.000Z';

test('a run closed from outside ends as GET /tasks/{id} says; one that ended on its own adds nothing', () => {
  expect(endFromOutside({ status: 'RUNNING' }, NOW)).toBe('running');
  expect(endFromOutside({ status: 'TERMINATED', closedAt: '2026-11-26T23:59:00.000Z' }, NOW)).toEqual({
    status: 'failed',
    timestamp: '2026-11-26T23:59:00.000Z',
    error: { type: 'terminated', message: 'the task was terminated' },
  });
  expect(endFromOutside({ status: 'TIMED_OUT' }, NOW)).toMatchObject({
    status: 'failed',
    timestamp: NOW,
    error: { type: 'timeout' },
  });
  expect(endFromOutside({ status: 'NOT_FOUND' }, NOW)).toMatchObject({ status: 'failed', error: { type: 'vanished' } });
  for (const status of ['COMPLETED', 'FAILED', 'CANCELLED']) expect(endFromOutside({ status }, NOW)).toBe('closed');
});

test('the final delivery follows the callback’s events', () => {
  const end = {
    status: 'failed' as const,
    timestamp: NOW,
    error: { type: 'terminated', message: 'the task was terminated' },
  };
  const item = endDelivery('task_1', {}, end)!;
  expect(item).toMatchObject({ id: 'msg_task_1_end', type: 'task.failed' });
  expect(JSON.parse(item.body)).toEqual({
    type: 'task.failed',
    taskId: 'task_1',
    status: 'failed',
    timestamp: NOW,
    error: end.error,
  });
  expect(endDelivery('task_1', { events: ['completed'] }, end)).toBeUndefined();
  const done = endDelivery(
    'task_1',
    { events: ['completed'] },
    { status: 'completed', timestamp: NOW, output: 'hi', cost: '0.01' },
  )!;
  expect(JSON.parse(done.body)).toMatchObject({ result: { output: 'hi', cost: '0.01' } });
});
