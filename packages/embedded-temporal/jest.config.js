// The package's own test run (`npm test` here, or `npm test -w @agent-exec/embedded-temporal` at
// the repository's root): the same three kinds of test as the repository's jest.config.js, which
// also runs these files, in its own projects of the same names:
//   unit    *.test.ts         no engine, no child process
//   engine  *.engine.test.ts  the conformance suite, on the Temporal engine ENGINE names
//   e2e     *.e2e.test.ts     the server as a process (kill -9, crashes, logs)
// TEST_ENGINES (default: ENGINE, else "embedded") says which engines the engine and e2e projects
// run on, as at the root: "embedded temporal-cli" runs them on both (the real servers come from
// the repository's scripts/install-temporal-cli.sh; test/support/real-temporal.ts). The unit
// project's rules (no process, no connection off the machine, 10 s a test) are held by the
// repository's run, which has the guard for them (test/setup/unit-environment.js there).
const os = require('node:os');

const ENGINES = (process.env.TEST_ENGINES || process.env.ENGINE || 'embedded').split(/[\s,]+/).filter(Boolean);

const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  // Removes the process-wide hooks a workflow replay leaves behind (see the file).
  setupFilesAfterEnv: ['<rootDir>/test/setup/release-replay-hooks.ts'],
};

/** A project on one engine: the setup file makes ENGINE that engine before the test file loads. */
function onEngine(name, engine, project) {
  return {
    ...base,
    ...project,
    displayName: ENGINES.length > 1 || engine !== 'embedded' ? `${name} · ${engine}` : name,
    globals: { __ENGINE__: engine },
    setupFiles: ['<rootDir>/test/setup/engine.ts'],
  };
}

module.exports = {
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.(engine|e2e)\\.test\\.ts$'],
    },
    ...ENGINES.flatMap((engine) => [
      onEngine('engine', engine, { testMatch: ['**/*.engine.test.ts'] }),
      // On the real server the e2e files have nothing to run: they start this package's server.
      ...(engine === 'embedded' ? [onEngine('e2e', engine, { testMatch: ['**/*.e2e.test.ts'] })] : []),
    ]),
  ],
  // Engine and e2e tests start servers and workers: slow by nature, never flaky by design.
  testTimeout: 60_000,
  maxWorkers: Math.min(8, 2 * os.availableParallelism()),
};
