// Runs bin/temporal-dev as a real child process, for tests that must kill it.
import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../src/launcher/processes';

export { freePort };

export const DEV_SERVER_BIN = path.resolve(__dirname, '../../bin/temporal-dev');

export interface ServerProcess {
  port: number;
  address: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the server and resolves once it says it is serving. */
export async function startServerProcess(opts: { port?: number; dbFilename?: string; args?: string[] } = {}): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  const args = ['server', 'start-dev', '--port', String(port), '--headless', '--log-level', 'info', '--log-format', 'json'];
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
