// A schedule's stored request read back by the activity that builds each of its tasks.
import { ApplicationFailure } from '@temporalio/common';
import { storedRequest } from '../../activities/schedules';
import { runRequestSchema } from '../../src/common/contracts/run-request';

test('a request the API took when the schedule was made reads back as it was', () => {
  const stored = runRequestSchema.parse({ message: 'report', mode: 'fast', rules: ['be brief'] });
  expect(storedRequest(stored)).toEqual(stored);
});

test('a stored request the API no longer takes fails the task by name, not retried', () => {
  let thrown: unknown;
  try {
    storedRequest({ message: 'report', mode: 'turbo' });
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ApplicationFailure);
  const failure = thrown as ApplicationFailure;
  expect(failure.type).toBe('schedule_request_invalid');
  expect(failure.nonRetryable).toBe(true);
  expect(failure.message).toMatch(/^the schedule's request no longer fits the API: .*mode/);
});

test('the request schema reads its own output back unchanged (what a schedule keeps is read again at each time)', () => {
  const bodies = [
    { message: 'hi' },
    {
      message: '  spaced  ',
      mode: 'fast',
      system: 'be brief',
      rules: ['one'],
      background: true,
      multitask: 'reject',
      metadata: { a: 1 },
    },
    {
      message: 'tools',
      mcp_servers: [{ serverName: 'demo', serverUrl: 'http://127.0.0.1:8790/mcp' }],
      max_steps: 3,
      max_cost: 0.5,
      max_duration: 60,
    },
  ];
  for (const body of bodies) {
    const once = runRequestSchema.parse(body);
    expect(runRequestSchema.parse(once)).toEqual(once);
  }
});
