// Which Temporal engine the single-machine start runs, and how: our embedded
// engine (needs nothing beyond npm) or the real Temporal CLI's dev server (with
// its Web UI), installed into .tools/ on first use. The service itself talks to
// either through the same client: no code path depends on which one runs.
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { envSchema } from '../../common/config';
import { Child, ROOT, ensureDir, startChild, waitFor } from './processes';

export type EngineName = 'embedded' | 'temporal-cli';

/** Thrown when the real Temporal CLI is wanted but cannot be installed here. */
export class EngineUnavailableError extends Error {}

/** The engine the environment asks for (ENGINE, default embedded). */
export function engineFromEnv(env: NodeJS.ProcessEnv): EngineName {
  return envSchema.shape.ENGINE.parse(env.ENGINE || undefined);
}

function installed(flag: '--cli-only' | '--test-server-only'): string {
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/install-temporal-cli.sh'), flag], { encoding: 'utf8' });
  if (r.status !== 0) {
    const why = r.stderr.trim().split('\n').pop() || `install script exited with ${r.status}`;
    throw new EngineUnavailableError(
      `the real Temporal ${flag === '--cli-only' ? 'CLI' : 'test server'} is not available: ${why}`,
    );
  }
  return r.stdout.trim().split('\n').pop()!;
}

/** Path of the real `temporal` executable, installed into .tools/ when missing. */
export function realTemporalCli(): string {
  return installed('--cli-only');
}

/** Path of the official time-skipping test server, installed into .tools/ when missing. */
export function realTestServer(): string {
  return installed('--test-server-only');
}

/** The executable that serves `temporal server start-dev` arguments for an engine. */
export function devServerExecutable(engine: EngineName): string {
  return engine === 'temporal-cli' ? realTemporalCli() : path.join(ROOT, 'bin/temporal-dev');
}

export interface EngineOptions {
  engine: EngineName;
  port: number;
  /** Data folder; absent = in memory (embedded) or a throwaway database (real). */
  dataDir?: string;
  /** Web UI port of the real dev server; 0 = headless. */
  uiPort?: number;
  /** Remote codec endpoint the Web UI decodes payloads through (the gateway's /codec). */
  uiCodecEndpoint?: string;
  /** The embedded engine with a data folder: closed runs kept in memory (ENGINE_MAX_CLOSED_IN_MEMORY). */
  maxClosedInMemory?: number;
  echo?: (line: string) => void;
}

export interface RunningEngine {
  address: string;
  child: Child;
  /** The Web UI, when the engine serves one. */
  uiUrl?: string;
  /** Where it keeps its data, when it does. */
  dbFile?: string;
}

export async function startEngine(opts: EngineOptions): Promise<RunningEngine> {
  // Errors only: at warn the engine logs every request it refuses, and clients are refused routinely
  // (a describe of a session not yet started, the gateway's poll of an accounts registry not yet created).
  const args = ['server', 'start-dev', '--port', String(opts.port), '--log-level', 'error', '--log-format', 'json'];
  // Each engine has its own file format: the two must never share a file.
  const dbFile = opts.dataDir
    ? path.join(ensureDir(opts.dataDir), opts.engine === 'embedded' ? 'temporal.db' : 'temporal-cli.sqlite')
    : undefined;
  if (dbFile) args.push('--db-filename', dbFile);
  // The embedded engine's own dynamic config key (packages/embedded-temporal/src/engine/limits.ts).
  if (dbFile && opts.engine === 'embedded' && opts.maxClosedInMemory !== undefined)
    args.push('--dynamic-config-value', `embedded.maxClosedRunsInMemory=${opts.maxClosedInMemory}`);
  let uiUrl: string | undefined;
  if (opts.engine === 'temporal-cli' && opts.uiPort) {
    args.push('--ui-port', String(opts.uiPort), '--ui-ip', '127.0.0.1');
    if (opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
    uiUrl = `http://127.0.0.1:${opts.uiPort}`;
  } else {
    args.push('--headless');
  }
  if (opts.engine === 'temporal-cli') args.push('--ip', '127.0.0.1');
  const bin = devServerExecutable(opts.engine);
  const child =
    opts.engine === 'embedded'
      ? startChild('engine', process.execPath, [bin, ...args], { echo: opts.echo })
      : startChild('engine', bin, args, { echo: opts.echo });
  const address = `127.0.0.1:${opts.port}`;
  await waitFor(
    opts.engine === 'embedded' ? 'embedded Temporal engine' : 'Temporal CLI dev server',
    child,
    async () => {
      const c = await Connection.connect({ address, connectTimeout: 500 });
      try {
        // The real server accepts connections before its namespace is registered.
        await c.workflowService.describeNamespace({ namespace: 'default' });
      } finally {
        await c.close();
      }
      return true;
    },
  );
  return { address, child, uiUrl, dbFile };
}
