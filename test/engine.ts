// The Temporal engine the tests run on: ENGINE=embedded (default, ours) or
// ENGINE=temporal-cli (the real Temporal CLI dev server and, for time skipping,
// the official test server), the same variable `npm start` reads. TEMPORAL_ADDRESS
// instead points the conformance suite at a server started elsewhere.
import path from 'node:path';
import { TestWorkflowEnvironment, type LocalTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { devServerExecutable, engineFromEnv, realTestServer } from '../src/dev/launcher/engines';

export const ENGINE = engineFromEnv(process.env);

/** True when the tests talk to a real Temporal server, not the embedded engine. */
export const ON_REAL_SERVER = ENGINE === 'temporal-cli' || !!process.env.TEMPORAL_ADDRESS;

/** The executable that takes `server start-dev ...` arguments (what createLocal launches). */
export function devServerPath(): string {
  return devServerExecutable(ENGINE);
}

/** The executable that takes the time-skipping test server's `<port>` argument. */
export function timeSkippingServerPath(): string {
  return ENGINE === 'temporal-cli' ? realTestServer() : path.resolve(__dirname, '../bin/temporal-dev');
}

/**
 * Time skipping runs on the official Java test server under ENGINE=temporal-cli.
 * It serves no schedules, ends a cron run as continued-as-new (initiator unset),
 * and holds a time lock of its own while no timer is pending: tests of those
 * guard on this (packages/embedded-temporal/README.md lists these differences, under Time skipping).
 */
export const JAVA_TEST_SERVER = ENGINE === 'temporal-cli';

type LocalServer = Omit<NonNullable<LocalTestWorkflowEnvironmentOptions['server']>, 'executable'>;

/** createLocal on the ENGINE's dev server (what `server start-dev` runs). */
export function localEnv(server: LocalServer = {}): Promise<TestWorkflowEnvironment> {
  return startingAgain(() =>
    TestWorkflowEnvironment.createLocal({
      server: { ...server, executable: { type: 'existing-path', path: devServerPath() } },
    }),
  );
}

/** createTimeSkipping on the ENGINE's time-skipping server. */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  return startingAgain(() =>
    TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: timeSkippingServerPath() } },
    }),
  );
}

/**
 * The SDK gives a server it launches 5 s to answer, which a process that loads
 * Node and its modules can miss on a machine busy with the rest of the suite:
 * that one failure (and no other) starts it again, twice at most.
 */
async function startingAgain(start: () => Promise<TestWorkflowEnvironment>): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test(String((err as Error)?.message))) throw err;
    }
  }
}
