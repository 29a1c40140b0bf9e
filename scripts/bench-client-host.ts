// Parent side of the bench's measuring client (bench-client.ts): forks it and
// runs jobs on it, one at a time.
import { fork, ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ClientJob, ClientMessage, ClientResult } from './bench-client';

export interface BenchClient {
  readonly pid: number | undefined;
  run(job: ClientJob): Promise<ClientResult>;
  /** n unmeasured GET /healthz, to warm the client's own code. */
  warm(base: string, n: number): Promise<void>;
  close(): void;
}

export function startBenchClient(env: NodeJS.ProcessEnv): BenchClient {
  const child: ChildProcess = fork(path.join(__dirname, 'bench-client.ts'), [], {
    // A young generation big enough that a phase sees few or no scavenges in the client.
    execArgv: ['-r', 'tsx/cjs', '--max-semi-space-size=32'],
    env: { ...env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  child.on('message', (msg: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error !== undefined) w.reject(new Error(`bench client: ${msg.error}`));
    else w.resolve(msg.result);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`bench client exited (${code})`));
    waiting.clear();
  });
  const call = <T>(msg: Omit<ClientMessage, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      child.send({ ...msg, id } as ClientMessage);
    });
  return {
    pid: child.pid,
    run: (job) => call<ClientResult>({ job }),
    warm: (base, n) => call<void>({ warmHealthz: { base, n } }),
    close: () => {
      if (child.connected) child.disconnect();
    },
  };
}
