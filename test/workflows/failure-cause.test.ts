// Walking a failure's causes (workflows/failure-cause.ts).
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { causeChain, innermostFailure } from '../../workflows/failure-cause';

const app = ApplicationFailure.create({
  type: 'model_unavailable',
  message: 'the model is down',
  details: [{ events: [] }],
});
const activity = new ActivityFailure(
  'activity failed',
  'modelTurn',
  '1',
  RetryState.MAXIMUM_ATTEMPTS_REACHED,
  'worker',
  app,
);

test('the chain lists the failure and each cause, outermost first', () => {
  expect([...causeChain(activity)]).toEqual([activity, app]);
  expect([...causeChain(undefined)]).toEqual([]);
});

test('the innermost failure with a message is the one that says what went wrong', () => {
  expect(innermostFailure(activity)).toBe(app);
  expect(innermostFailure(app)).toBe(app);
  // A cause without a message says nothing: the walk stops above it.
  expect(innermostFailure({ message: 'outer', cause: { code: 14 } })).toEqual({
    message: 'outer',
    cause: { code: 14 },
  });
  expect(innermostFailure(undefined)).toBeUndefined();
});
