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
  // Two cores: more workers than that only makes the engine-heavy suites fight for CPU.
  maxWorkers: 2,
};
