// Starting the service's helper threads (the worker's token thread, the
// gateway's start thread): a TypeScript entry loads through tsx, as the process
// itself does, and the thread says when it can take work.
import { Worker as Thread } from 'node:worker_threads';

export interface SpawnedThread<R> {
  worker: Thread;
  /** The thread's `{ type: 'ready' }` message; rejects with `exitError` if it exits first. */
  ready: Promise<R>;
}

/** Under a test runner whose transform does not reach threads, tsx is added. */
export function threadExecArgv(entry: string): string[] | undefined {
  const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
  return entry.endsWith('.ts') && !hasTsx ? [...process.execArgv, '-r', require.resolve('tsx/cjs')] : undefined;
}

export function spawnThread<R extends { type: 'ready' }>(entry: string, workerData: unknown, exitError: (code: number) => Error): SpawnedThread<R> {
  const worker = new Thread(entry, { workerData, execArgv: threadExecArgv(entry) });
  const ready = new Promise<R>((resolve, reject) => {
    worker.on('message', (m: { type?: unknown }) => {
      if (m?.type === 'ready') resolve(m as R);
    });
    worker.once('exit', (code) => reject(exitError(code)));
  });
  // Nobody may be waiting for it; the exit handlers of the caller report the failure.
  ready.catch(() => undefined);
  return { worker, ready };
}
