/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  // SDK-driven tests start servers and workers; they are slow by nature, never flaky by design.
  testTimeout: 60_000,
  // Two cores: more workers than that only makes the engine-heavy suites fight for CPU.
  maxWorkers: 2,
};
