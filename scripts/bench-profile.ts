// For the engine's benches (scripts/bench-devserver-profile.ts), which move with the engine
// package: the CPU profile types live in bench/profile.ts.
export type { CallFrame, CpuProfile, ProfileNode } from '../bench/profile';
