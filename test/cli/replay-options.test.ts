// The replay CLI's arguments, in process: each mistake is one UsageError that
// names it (test/cli/replay.e2e.test.ts checks how the CLI prints one, exit 2).
import path from 'node:path';
import { parseOptions, UsageError } from '../../src/cli/replay-options';

const WORKFLOWS = path.resolve(__dirname, '../../workflows');

test.each([
  [[], 'give workflow ids or --all'],
  [['--all', 'task_x'], '--all takes no workflow ids'],
  [['a', 'b', '--run-id', 'r'], '--run-id needs exactly one workflow id'],
  [['a', '--hours', '2'], '--hours goes with --all'],
  [['--all', '--hours', 'soon'], '--hours must be a positive number, got soon'],
  [['--all', '--hours', '0'], '--hours must be a positive number, got 0'],
  [['--all', '--workflows', '/nowhere/at/all'], '--workflows: no such file or folder /nowhere/at/all'],
  [['--frobnicate'], "Unknown option '--frobnicate'"],
])('bad usage %j: %s', (args, problem) => {
  const attempt = () => parseOptions(args);
  expect(attempt).toThrow(UsageError);
  expect(attempt).toThrow(new UsageError(problem));
});

test("ids with a run id, or --all with hours; the workflows default to the service's own", () => {
  expect(parseOptions(['task_1', '--run-id', 'r1', '--json'])).toEqual({
    ids: ['task_1'],
    runId: 'r1',
    all: false,
    hours: 24,
    workflowsPath: WORKFLOWS,
    json: true,
  });
  expect(parseOptions(['--all', '--hours', '1.5', '--workflows', WORKFLOWS])).toEqual({
    ids: [],
    runId: undefined,
    all: true,
    hours: 1.5,
    workflowsPath: WORKFLOWS,
    json: false,
  });
});
