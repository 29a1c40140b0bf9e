// Command-line and environment options of bench-devserver.ts: what to run,
// how long for, and how to launch the server and the worker.
import * as path from 'node:path';
import { readFlags } from './bench-flags';

const PACKAGE_ROOT = path.resolve(__dirname, '..');
const DEFAULT_SERVER_BIN = path.join(PACKAGE_ROOT, 'bin', 'temporal-dev');

export interface Options {
  engines: Engine[];
  workflows: number;
  concurrency: number[];
  modes: Mode[];
  flatWorkflows: number;
  flatStep: number;
  flatConcurrency: number;
  warmup: number;
  timeLimitS: number;
  serverNodeFlags: string[];
  serverBin: string;
  workerCompression: 'gzip' | 'none';
  workerPollers?: number;
  jsonOut?: string;
}

export type Mode = 'memory' | 'file';
/** Our engine, or the real Temporal CLI dev server as the yardstick. */
export type Engine = 'embedded' | 'temporal-cli';
const ENGINES: readonly Engine[] = ['embedded', 'temporal-cli'];

const USAGE = `usage: npm run bench:devserver -- [--engines embedded,temporal-cli] [--workflows N] [--concurrency 1,100] [--modes memory,file|none]
       [--flat N (0 skips)] [--flat-step N] [--flat-concurrency N] [--warmup N] [--time-limit S]
       [--server-node-flags "--cpu-prof --cpu-prof-dir=/tmp/prof"] [--server-bin PATH] [--json FILE]
       [--worker-compression gzip|none] [--worker-pollers N]`;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Options {
  const raw: Record<string, string | undefined> = {
    engines: env.BENCH_ENGINES,
    workflows: env.BENCH_WORKFLOWS,
    concurrency: env.BENCH_CONCURRENCY,
    modes: env.BENCH_MODES,
    flat: env.BENCH_FLAT_WORKFLOWS,
    'flat-step': env.BENCH_FLAT_STEP,
    'flat-concurrency': env.BENCH_FLAT_CONCURRENCY,
    warmup: env.BENCH_WARMUP,
    'time-limit': env.BENCH_TIME_LIMIT_S,
    'server-node-flags': env.BENCH_SERVER_NODE_FLAGS,
    'server-bin': env.BENCH_SERVER_BIN,
    'worker-compression': undefined,
    'worker-pollers': undefined,
    json: undefined,
  };
  readFlags(argv, raw, USAGE);
  const int = (name: string, fallback: number, min: number): number => {
    const v = raw[name] === undefined ? fallback : Number(raw[name]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer >= ${min}`);
    return v;
  };
  const concurrency = (raw.concurrency ?? '1,100').split(',').map((s) => Number(s.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error('--concurrency must be a list of integers >= 1');
  const compression = raw['worker-compression'] ?? 'gzip';
  if (compression !== 'gzip' && compression !== 'none') throw new Error('--worker-compression must be gzip or none');
  // "none" skips the throughput cases (just the flatness run).
  const modes = raw.modes === 'none' ? [] : (raw.modes ?? 'memory,file').split(',').map((s) => s.trim());
  for (const m of modes) if (m !== 'memory' && m !== 'file') throw new Error(`unknown mode ${m} (memory, file)`);
  return {
    engines: parseEngines(raw.engines),
    workflows: int('workflows', 2000, 1),
    concurrency,
    modes: modes as Mode[],
    flatWorkflows: int('flat', 10_000, 0),
    flatStep: int('flat-step', 1000, 1),
    flatConcurrency: int('flat-concurrency', 100, 1),
    warmup: int('warmup', 100, 0),
    timeLimitS: int('time-limit', 1800, 30),
    serverNodeFlags: (raw['server-node-flags'] ?? '').split(/\s+/).filter(Boolean),
    serverBin: path.resolve(raw['server-bin'] ?? DEFAULT_SERVER_BIN),
    workerCompression: compression,
    workerPollers: raw['worker-pollers'] === undefined ? undefined : int('worker-pollers', 10, 1),
    jsonOut: raw.json,
  };
}

function parseEngines(value: string | undefined): Engine[] {
  const names = (value ?? ENGINES.join(',')).split(',').map((s) => s.trim());
  for (const e of names)
    if (!ENGINES.includes(e as Engine)) throw new Error(`unknown engine ${e} (${ENGINES.join(', ')})`);
  // Listed order does not matter: each case runs the embedded engine first, then the real one.
  return ENGINES.filter((e) => names.includes(e));
}
