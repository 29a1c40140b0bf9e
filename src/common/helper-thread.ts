// The service's helper threads (the worker's token thread, the gateway's start
// thread) share one life cycle: started on first use, a TypeScript entry loaded
// through bin/register-ts.js as the process itself is, ready once the thread says so, replaced
// by the next call after it dies, and the calls it had in flight failed then.
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { loadsTypeScript, TS_LOADER_ARGS } from './ts-loader';

/** Under a test runner whose transform does not reach threads, the TypeScript loader is added. */
export function threadExecArgv(entry: string): string[] | undefined {
  return entry.endsWith('.ts') && !loadsTypeScript(process.execArgv)
    ? [...process.execArgv, ...TS_LOADER_ARGS]
    : undefined;
}

export interface HelperThreadSpec {
  entry: string;
  workerData: unknown;
  logger: Logger;
  /** Names the thread in log lines, e.g. "start thread". */
  name: string;
  /** What becomes of its calls in flight when it exits unasked, for the log line. */
  onLoss: string;
  /** The error those calls fail with. */
  exitError(code: number): Error;
}

export interface RunningThread<R> {
  worker: Thread;
  /** The thread's `{ type: 'ready' }` message; rejects if it exits first. */
  ready: Promise<R>;
}

export abstract class HelperThread<P extends { reject(e: Error): void }, R extends { type: 'ready' }> {
  /** Calls in flight, by id. */
  protected readonly pending = new Map<number, P>();
  protected closed = false;
  private current?: RunningThread<R>;
  private lastId = 0;

  constructor(private readonly spec: HelperThreadSpec) {}

  /** Handles every message but `ready`. */
  protected abstract onMessage(m: unknown): void;

  protected nextId(): number {
    return ++this.lastId;
  }

  /** Whether a thread is up (or starting): a call now would not start one. */
  protected get running(): boolean {
    return this.current !== undefined;
  }

  protected thread(): RunningThread<R> {
    if (this.current) return this.current;
    const { entry, workerData, logger, name, onLoss } = this.spec;
    const worker = new Thread(entry, { workerData, execArgv: threadExecArgv(entry) });
    const ready = new Promise<R>((resolve, reject) => {
      worker.on('message', (m: { type?: unknown }) => {
        if (m?.type === 'ready') resolve(m as R);
        else this.onMessage(m);
      });
      worker.on('error', (err) => logger.error({ err: err.message }, `${name} failed`));
      worker.on('exit', (code) => {
        if (this.current?.worker === worker) this.current = undefined;
        const e = this.spec.exitError(code);
        reject(e);
        if (this.closed) return;
        logger.warn({ code, pending: this.pending.size }, `${name} exited; ${onLoss}`);
        this.failAll(e);
      });
    });
    // Nobody may be waiting for it; the exit handler reports the loss.
    ready.catch(() => undefined);
    this.current = { worker, ready };
    return this.current;
  }

  /** Stops the thread for good; calls in flight fail with `reason`. */
  protected async stop(reason: Error): Promise<void> {
    this.closed = true;
    const t = this.current;
    this.current = undefined;
    if (t) await t.worker.terminate();
    this.failAll(reason);
  }

  private failAll(e: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }
}
