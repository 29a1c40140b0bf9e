// The relay rows' baseline: a bare token relay on the same machine, the same
// Redis and the same scripted model, in two processes of its own standing where
// the worker and the gateway stand (bench-bare-relay-publisher.ts and
// bench-bare-relay-server.ts). The bench times it exactly as it times the
// service (measureRelayRow: same tokens, streams and client), right after the
// service's row at each stream count. Its figures are what four process
// wake-ups per token cost on these cores with almost no work in between; what
// the service adds is the difference.
import type { ChildProcess } from 'node:child_process';
import { spawnBenchServer, stopChild, waitForPort } from './bench-proc';

export interface BareRelay {
  /** Base URL of its SSE server (POST / with {message}). */
  url: string;
  readonly children: ChildProcess[];
  stop(): Promise<void>;
}

/** Starts the publisher, then the SSE server that calls it; both stop with stop(). */
export async function startBareRelay(redisUrl: string, modelUrl: string, env: NodeJS.ProcessEnv): Promise<BareRelay> {
  const children: ChildProcess[] = [];
  const stop = async () => void (await Promise.all(children.map(stopChild)));
  try {
    const publisher = spawnBenchServer('bench-bare-relay-publisher.ts', [redisUrl, modelUrl], env);
    children.push(publisher);
    const publisherPort = await waitForPort(publisher);
    const server = spawnBenchServer('bench-bare-relay-server.ts', [redisUrl, String(publisherPort)], env);
    children.push(server);
    return { url: `http://127.0.0.1:${await waitForPort(server)}`, children, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
