// Runs before each unit test file (setupFilesAfterEnv in jest.config.js), beside its environment
// (test/setup/unit-environment.js, which refuses child processes and connections off this machine).

// A unit test is quick by definition (the engine and e2e projects keep jest's 60 s).
jest.setTimeout(10_000);

// An engine started by the SDK's test environment is launched by its native core, out of reach of
// child_process: its starters are refused. MockActivityEnvironment (an activity run in this
// process) stays usable, and types are free (import type is erased). A mock is the file's own.
jest.mock('@temporalio/testing', () => {
  const actual = jest.requireActual('@temporalio/testing');
  const refuse = () => {
    throw new Error(
      'a unit test may not start a Temporal engine (TestWorkflowEnvironment): make it an engine test (*.engine.test.ts)',
    );
  };
  return {
    ...actual,
    TestWorkflowEnvironment: { createLocal: refuse, createTimeSkipping: refuse, createFromExistingServer: refuse },
  };
});
