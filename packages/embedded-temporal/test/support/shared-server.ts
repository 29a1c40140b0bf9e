// One dev server per jest worker process, engine and set of start flags, shared by every engine
// test file that worker runs. Starting a server costs about a second of CPU (the real CLI's Go
// server or the embedded engine's Node process), and the engine projects start one per file: on
// both engines that was some 150 CPU-seconds of a suite bound by its two cores. A file keeps what
// made it independent of the others: its own task queues and workflow ids (random), its own
// connections, and a server of its own where it asks for one (a data file, lowered limits, time
// skipping), which createLocal still starts.
import childProcess = require('node:child_process');
import net from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from './free-port';
import { waitUntil } from './wait-until';
import { Connection } from '@temporalio/client';

type Registry = Map<string, Promise<string>>;

/**
 * The address of each server this worker process started, by engine executable and flags. Jest
 * gives every test file fresh modules and globals, but Node's own modules are the process's: the
 * registry hangs on one, so the next file of the same worker finds the server the first started.
 */
function registry(): Registry {
  const host = childProcess as unknown as Record<symbol, Registry | undefined>;
  const key = Symbol.for('embedded-temporal.test.shared-servers');
  return (host[key] ??= new Map());
}

/** A TestWorkflowEnvironment on the worker's shared `server start-dev` of `executable` with `extraArgs`. */
export async function sharedLocalEnv(
  executable: string,
  extraArgs: readonly string[] = [],
): Promise<TestWorkflowEnvironment> {
  const servers = registry();
  const key = JSON.stringify([executable, ...extraArgs]);
  let address = servers.get(key);
  if (!address) {
    address = startServer(executable, extraArgs);
    servers.set(key, address);
    // A server that failed to start is not handed to the next file.
    address.catch(() => servers.delete(key));
  }
  return TestWorkflowEnvironment.createFromExistingServer({ address: await address });
}

/**
 * Starts the server under a shell that stops it when its stdin closes: the pipe's other end is
 * this process's, so the server ends with the jest worker however the worker ends (jest's own
 * stop, a crash, Ctrl-C), and no test file waits on it.
 */
async function startServer(executable: string, extraArgs: readonly string[]): Promise<string> {
  const port = await freePort();
  // The flags @temporalio/testing's createLocal gives the server it starts.
  const args = [
    ...['server', 'start-dev', '--port', String(port), '--namespace', 'default', '--ip', '127.0.0.1'],
    ...['--log-format', 'pretty', '--log-level', 'warn', '--headless'],
    ...['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'],
    ...['--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true'],
    ...['--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true'],
    ...extraArgs,
  ];
  const holder = childProcess.spawn(
    'sh',
    ['-c', '"$@" & server=$!; read -r _; kill "$server"', 'sh', executable, ...args],
    {
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  holder.unref();
  (holder.stdin as unknown as net.Socket).unref();
  const address = `127.0.0.1:${port}`;
  await waitUntil(
    `${executable} server start-dev (shared by this jest worker's engine tests) to answer on port ${port}`,
    () => connects(port),
    {
      stepMs: 50,
      giveUpIf: () => (holder.exitCode !== null ? `it exited (${holder.exitCode}) first` : undefined),
    },
  );
  // The real server takes connections before its frontend is ready ("Frontend is not healthy yet"):
  // a test file's first call must find it ready, as createLocal's do.
  await waitUntil(`${executable} server start-dev on port ${port} to answer GetSystemInfo`, () => answers(address), {
    stepMs: 100,
    giveUpIf: () => (holder.exitCode !== null ? `it exited (${holder.exitCode}) first` : undefined),
  });
  return address;
}

/** Whether the server answers a GetSystemInfo call now. */
async function answers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 }).catch(() => undefined);
  if (!connection) return false;
  try {
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/** Whether the port takes a connection now. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
