// For the engine's benches (scripts/bench-devserver*.ts), which move with the engine package:
// the bench's flag reader lives in bench/options.ts.
export { readFlags } from '../bench/options';
