// For the engine's benches (scripts/bench-compaction.ts), which move with the engine package:
// the bench's statistics live in bench/measure.ts.
export { fmtMs, summarize } from '../bench/measure';
