// The sandbox of the session's computer: the interface (sandbox.ts) and the local implementation.
export * from './sandbox';
export { createLocalSandbox } from './bwrap-sandbox';
export type { LocalSandboxOptions } from './bwrap-sandbox';
