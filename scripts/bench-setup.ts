// What the bench sets up around its measurements: the stack's environment
// (accounts, the scripted model served by the bench process, profiling) and
// the guards that stop everything it started, however the run ends.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchOptions } from './bench-options';

export interface StackEnv {
  env: NodeJS.ProcessEnv;
  /** Absolute folder of the CPU profiles; unset when not profiling. */
  profileDir?: string;
  /** Takes this process's profiling settings back out once the stack is up (call once). */
  restore(): void;
}

/**
 * The stack's environment: this machine's own, minus what would point the
 * stack elsewhere, plus `apiKeys` (`key:account` pairs) and the scripted model
 * at `modelUrl`. An OPENAI_API_KEY stops the stack from starting its own
 * scripted model, so the worker talks to the bench's (the one with the hook).
 */
export function stackEnv(opts: Pick<BenchOptions, 'profileDir'>, apiKeys: string[], modelUrl: string): StackEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['TEMPORAL_ADDRESS', 'REDIS_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'PORT', 'API_KEYS', 'DATA_DIR', 'NODE_OPTIONS']) delete env[k];
  Object.assign(env, {
    API_KEYS: apiKeys.join(','),
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'bench-scripted-model',
    OPENAI_BASE_URL: modelUrl,
    MODEL_FLASH: 'scripted-flash',
    MODEL_BASE: 'scripted-base',
    MODEL_MAX: 'scripted-max',
    // The MCP phase's server is on loopback, which the outbound policy refuses unless allowlisted.
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    // The bench does not use the stack's demo MCP server (nor its fixed port 8790).
    DEMO_MCP: 'false',
  });
  const profileDir = opts.profileDir ? path.resolve(opts.profileDir) : undefined;
  const savedNodeOptions = process.env.NODE_OPTIONS;
  if (!profileDir) return { env, restore: () => undefined };
  fs.mkdirSync(profileDir, { recursive: true });
  // Node refuses --cpu-prof in NODE_OPTIONS; a preloaded module starts the same profiler.
  env.NODE_OPTIONS = `--require ${path.join(__dirname, '..', 'bin', 'register-ts.js')} --require ${path.join(__dirname, 'bench-cpu-prof.ts')}`;
  env.BENCH_CPU_PROF_DIR = profileDir;
  process.env.BENCH_CPU_PROF_DIR = profileDir;
  // The engine is spawned with this process's environment, not the stack's env.
  process.env.NODE_OPTIONS = env.NODE_OPTIONS;
  return {
    env,
    profileDir,
    restore: () => {
      if (savedNodeOptions === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = savedNodeOptions;
      delete process.env.BENCH_CPU_PROF_DIR;
    },
  };
}

export interface RunGuards {
  timeLimitS: number;
  /** Stops everything the run started; called at most once by the guards. */
  cleanup: () => Promise<void>;
  /** The child processes to kill if this process exits without cleanup. */
  children: () => (ChildProcess | undefined)[];
  log: (line: string) => void;
}

/**
 * SIGINT/SIGTERM and a hard stop 90 s past the time limit (a wedged phase
 * must not keep the run and its children alive) run cleanup and exit; an
 * exit without cleanup kills the children, so no orphans are left.
 */
export function guardRun(g: RunGuards): void {
  process.on('exit', () => {
    for (const c of g.children()) if (c?.pid && c.exitCode === null) safeKill(c.pid);
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      g.log(`${sig}: stopping the stack`);
      void g.cleanup().finally(() => process.exit(130));
    });
  }
  const hardStop = setTimeout(() => {
    g.log('hard time limit reached: stopping everything');
    void g.cleanup().finally(() => process.exit(2));
  }, (g.timeLimitS + 90) * 1000);
  hardStop.unref();
}

function safeKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
