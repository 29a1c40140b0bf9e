// How the SDK's log lines reach the service's log (src/common/temporal.ts).
import { sdkLineLevel } from '../../src/common/temporal';

test('SDK lines keep their level', () => {
  expect(sdkLineLevel({ level: 'WARN', message: 'Activity failed' })).toBe('warn');
  expect(sdkLineLevel({ level: 'ERROR', message: 'Worker failed' })).toBe('error');
  expect(sdkLineLevel({ level: 'INFO', message: 'Workflow bundle created' })).toBe('info');
});

test("the bundler's multi-line webpack report is detail", () => {
  expect(sdkLineLevel({ level: 'INFO', message: 'asset workflow-bundle.js\nwebpack compiled' })).toBe('debug');
  // A multi-line warning or error stays what it is.
  expect(sdkLineLevel({ level: 'WARN', message: 'one\ntwo' })).toBe('warn');
});

test("the activities-only watch worker's 'not polling for workflow tasks' is detail; another worker's stays a warning", () => {
  const message = 'No workflows registered, not polling for workflow tasks';
  expect(sdkLineLevel({ level: 'WARN', message, meta: { taskQueue: 'agent-tasks-watch' } })).toBe('debug');
  expect(sdkLineLevel({ level: 'WARN', message, meta: { taskQueue: 'agent-tasks' } })).toBe('warn');
  expect(sdkLineLevel({ level: 'WARN', message })).toBe('warn');
});
