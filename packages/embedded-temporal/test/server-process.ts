// Runs the package's bin/temporal-dev as a real child process, for tests that must kill it.
import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from './support/free-port';

export { freePort };

export const DEV_SERVER_BIN = path.resolve(__dirname, '../bin/temporal-dev');

export interface ServerProcess {
  port: number;
  address: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the server and resolves once it says it is serving. */
export async function startServerProcess(
  opts: { port?: number; dbFilename?: string; args?: string[] } = {},
): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  const args = [
    'server',
    'start-dev',
    '--port',
    String(port),
    '--headless',
    '--log-level',
    'info',
    '--log-format',
    'json',
  ];
  if (opts.dbFilename) args.push('--db-filename', opts.dbFilename);
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, [DEV_SERVER_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 15s: ${log}`)), 15_000);
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      if (log.includes('embedded Temporal server started')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${log}`));
    });
  });
  child.stderr!.resume();
  return {
    port,
    address: `127.0.0.1:${port}`,
    child,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export interface KillableServer {
  connection(): Connection;
  /** host:port of the server (the same across restarts), for connections of the test's own. */
  address(): string;
  /** Starts the server on a file of its own (in a fresh temporary folder) and connects. */
  start(): Promise<void>;
  /** kill -9 of the server, then a restart on the same port and file, and a new connection. */
  killAndRestart(): Promise<void>;
}

/** One killable server per test file: registers the folder's set-up and the teardown. */
export function useKillableServer(prefix: string): KillableServer {
  let dir = '';
  let port = 0;
  let server: ServerProcess | undefined;
  let connection: Connection | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  });
  afterAll(async () => {
    await connection?.close();
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const up = async () => {
    server = await startServerProcess({ port, dbFilename: path.join(dir, 'temporal.db') });
    connection = await Connection.connect({ address: server.address });
  };
  return {
    connection: () => connection!,
    address: () => `127.0.0.1:${port}`,
    async start() {
      port = await freePort();
      await up();
    },
    async killAndRestart() {
      await server!.kill('SIGKILL');
      await connection!.close();
      await up();
    },
  };
}
