// The one poll of the whole test suite lives with the engine's package, whose tests may import
// nothing of the service's tree; the service's tests (which may depend on the package) take it
// from there. What it does and why: its file.
export * from '../../packages/embedded-temporal/test/support/wait-until';
