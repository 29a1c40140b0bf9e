// The engine's bench moved into its package (packages/embedded-temporal/bench/); this re-export
// stays for test/scripts/bench-devserver.e2e.test.ts, which imports it from here until the test
// moves beside the bench.
export * from '../packages/embedded-temporal/bench/bench-devserver-cases';
