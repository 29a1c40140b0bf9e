// Three kinds of test, one jest project each (docs/testing.md):
//   unit    *.test.ts         no engine, no child process, no socket off this machine; 10 s each
//   engine  *.engine.test.ts  runs on the Temporal engine ENGINE names (workflows, conformance, the start thread)
//   e2e     *.e2e.test.ts     starts real processes (the stack, Redis, PostgreSQL, the CLI, our engine's own server)
// TEST_ENGINES (default: ENGINE, else "embedded") says which engines the engine and e2e projects
// run on; `npm test` passes "embedded temporal-cli". On the real Temporal dev server, the e2e
// project runs only the files that talk to Temporal in ways an engine can get wrong
// (test/setup/real-server-e2e.js says which, and why each).
const os = require('node:os');

const ENGINES = (process.env.TEST_ENGINES || process.env.ENGINE || 'embedded').split(/[\s,]+/).filter(Boolean);

const REAL_SERVER_E2E = require('./test/setup/real-server-e2e');
const EMBEDDED_ONLY_ENGINE = require('./test/setup/embedded-only-engine');

const base = {
  testEnvironment: 'node',
  rootDir: __dirname,
  // The embedded engine's own tests (its workspace package) run in the same projects, on the same
  // engines; the package's jest.config.js runs them alone (`npm test -w @agent-exec/embedded-temporal`).
  roots: ['<rootDir>/test', '<rootDir>/packages/embedded-temporal/test'],
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

const realE2e = REAL_SERVER_E2E.map((f) => `<rootDir>/test/${f}.e2e.test.ts`);

module.exports = {
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['**/*.test.ts'],
      // The cluster's files run in a pass of their own (jest.cluster.config.js).
      testPathIgnorePatterns: ['/node_modules/', '\\.(engine|e2e|cluster)\\.test\\.ts$'],
      // Refuses child processes and connections off this machine for the file's life.
      testEnvironment: '<rootDir>/test/setup/unit-environment.js',
      // Refuses a Temporal engine, and gives each unit test 10 s (jest reads testTimeout from the top level only).
      setupFilesAfterEnv: [...base.setupFilesAfterEnv, '<rootDir>/test/setup/unit-guard.ts'],
    },
    ...ENGINES.flatMap((engine) => [
      onEngine('engine', engine, {
        testMatch: ['**/*.engine.test.ts'],
        // On the real server, all but the files test/setup/embedded-only-engine.js lists (and why).
        ...(engine === 'embedded'
          ? {}
          : {
              testPathIgnorePatterns: [
                '/node_modules/',
                ...EMBEDDED_ONLY_ENGINE.map((f) => `/${f}\\.engine\\.test\\.ts$`),
              ],
            }),
      }),
      onEngine('e2e', engine, engine === 'embedded' ? { testMatch: ['**/*.e2e.test.ts'] } : { testMatch: realE2e }),
    ]),
  ],
  // Engine and e2e tests start servers and workers: slow by nature, never flaky by design.
  testTimeout: 60_000,
  // Slowest files first (test/setup/sequencer.js), so that no long file starts last.
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  // Two and a half workers per core (at most 8): the end-to-end suites spend about half their time
  // waiting (timers, restarts, polls), so more files than cores keep the CPU busy. Measured on 2
  // cores, six e2e files: 2 workers 144 s wall at 50% CPU, 4 workers 96 s at 74%; the whole suite
  // with 4 still left 12% of both cores idle (CI10: 1.75 cores busy on average), hence 5.
  maxWorkers: Math.min(8, Math.ceil(2.5 * os.availableParallelism())),
};
