// The cluster pass (docs/testing.md, "The cluster pass"): the production topology of
// scripts/cluster.sh (the official Temporal server on PostgreSQL, two workers, two gateways behind
// HAProxy) brought up once, and the *.cluster.test.ts files run against it one after another (they
// kill and drain its processes). CLUSTER_DIR naming a cluster that is up: that one is used, and
// left up.
const base = require('./jest.config.js');

module.exports = {
  displayName: 'cluster',
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/test/cluster'],
  testMatch: ['**/*.cluster.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/test/cluster/global-setup.js',
  globalTeardown: '<rootDir>/test/cluster/global-teardown.js',
  testSequencer: '<rootDir>/test/cluster/sequencer.js',
  testTimeout: base.testTimeout,
  maxWorkers: 1,
};
