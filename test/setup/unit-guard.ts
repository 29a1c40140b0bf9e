// Holds the unit project to its definition (jest.config.js): no child process, no connection
// off this machine. A unit test that starts a process or reaches out fails here, by name, and
// belongs in the e2e project (rename it *.e2e.test.ts). Loopback stays open: an Express app or a
// fake provider served in the test's own process is still a unit test.
//
// Jest shares node's built-in modules between the files a worker runs, so the guard is put in
// place for this file only and taken out after its tests (afterAll).
import childProcess from 'node:child_process';
import net from 'node:net';

// A unit test is quick by definition (the engine and e2e projects keep jest's 60 s).
jest.setTimeout(10_000);

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const PROCESS_CALLS = ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync'] as const;

const saved = new Map<string, unknown>();
for (const name of PROCESS_CALLS) {
  saved.set(name, childProcess[name]);
  (childProcess as Record<string, unknown>)[name] = () => {
    throw new Error(`a unit test may not start a process (child_process.${name}): make it an e2e test (*.e2e.test.ts)`);
  };
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const first = args[0] as { host?: string; path?: string } | number | string | undefined;
  const host = typeof first === 'object' && first !== null ? first.host : typeof args[1] === 'string' ? args[1] : undefined;
  const isPath = typeof first === 'string' || (typeof first === 'object' && first !== null && typeof first.path === 'string');
  if (!isPath && host !== undefined && !LOOPBACK.has(host)) {
    throw new Error(`a unit test may not connect off this machine (${host}): make it an e2e test (*.e2e.test.ts)`);
  }
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

afterAll(() => {
  for (const [name, fn] of saved) (childProcess as Record<string, unknown>)[name] = fn;
  net.Socket.prototype.connect = connect;
});

// An engine started by the SDK's test environment is launched by its native core, out of reach of
// child_process: its starters are refused. MockActivityEnvironment (an activity run in this
// process) stays usable, and types are free (import type is erased).
jest.mock('@temporalio/testing', () => {
  const actual = jest.requireActual('@temporalio/testing');
  const refuse = () => {
    throw new Error('a unit test may not start a Temporal engine (TestWorkflowEnvironment): make it an engine test (*.engine.test.ts)');
  };
  return { ...actual, TestWorkflowEnvironment: { createLocal: refuse, createTimeSkipping: refuse, createFromExistingServer: refuse } };
});
