const os = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  // Removes the process-wide hooks a workflow replay leaves behind (see the file).
  setupFilesAfterEnv: ['<rootDir>/test/setup/release-replay-hooks.ts'],
  // SDK-driven tests start servers and workers; they are slow by nature, never flaky by design.
  testTimeout: 60_000,
  // Two workers per core (at most 8): the end-to-end suites spend about half their time waiting
  // (timers, restarts, polls), so two per core keeps the CPU busy. Measured on 2 cores, six e2e
  // files: 2 workers 144 s wall at 50% CPU, 4 workers 96 s at 74%.
  maxWorkers: Math.min(8, 2 * os.availableParallelism()),
};
