// The main thread's side of the token thread: hands model streams to it and
// turns its messages back into the activity's progress, result or error.
//
// Why a thread: a token's way from the model to the relay is a few hundred
// microseconds of work, but on the main thread it waits behind whatever else
// runs there (workflow activations of tasks starting, other activities, the
// big heap's garbage collections), which is most of its latency under load.
// On its own event loop, and with the main thread niced (WORKER_NICE), the
// token path keeps the priority the API processes have.
import path from 'node:path';
import type { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { StreamRunnerError, type ModelStreamRunner, type StreamOutcome, type StreamRequest, type StreamRunOptions, type TurnProgress } from '../../activities/model-stream';
import { spawnThread } from '../spawn-thread';
import type { FromThread, StreamError, StreamThreadConfig, ToThread } from './protocol';

export interface ThreadedModelStreamOptions {
  config: StreamThreadConfig;
  logger: Logger;
  /** Thread entry point. Default: thread-main.ts beside this file (tests point elsewhere). */
  entry?: string;
}

interface Pending {
  opts: StreamRunOptions;
  resolve: (o: StreamOutcome) => void;
  reject: (e: unknown) => void;
}

/** An error the token thread reported, with the model client's status when there was one. */
export class ModelStreamError extends Error {
  readonly status?: number;
  constructor(e: StreamError) {
    super(e.message);
    this.name = e.name;
    if (e.status !== undefined) this.status = e.status;
  }
}

export class ThreadedModelStream implements ModelStreamRunner {
  private thread?: { worker: Thread; ready: Promise<number | undefined> };
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  constructor(private readonly opts: ThreadedModelStreamOptions) {}

  /** Starts the thread; resolves with its OS thread id (Linux) once it can take streams. */
  start(): Promise<number | undefined> {
    return this.ensure().ready;
  }

  run(req: StreamRequest, progress: TurnProgress, opts: StreamRunOptions): Promise<StreamOutcome> {
    if (this.closed) return Promise.reject(new StreamRunnerError('the worker is stopping: its token thread is closed'));
    if (opts.signal.aborted) return Promise.reject(new Error('model turn cancelled'));
    const id = ++this.nextId;
    const t = this.ensure();
    return new Promise<StreamOutcome>((resolve, reject) => {
      const onAbort = () => this.post(t.worker, { type: 'cancel', id });
      opts.signal.addEventListener('abort', onAbort, { once: true });
      const settle = <T>(fn: (v: T) => void) => (v: T) => {
        opts.signal.removeEventListener('abort', onAbort);
        fn(v);
      };
      this.pending.set(id, { opts, resolve: settle(resolve), reject: settle(reject) });
      this.post(t.worker, { type: 'run', id, req, progress });
    });
  }

  /** Stops the thread; streams still running fail (retryable) and Temporal retries them elsewhere. */
  async close(): Promise<void> {
    this.closed = true;
    const t = this.thread;
    this.thread = undefined;
    if (t) await t.worker.terminate();
    this.failAll(new StreamRunnerError('the worker stopped its token thread'));
  }

  private post(worker: Thread, msg: ToThread): void {
    worker.postMessage(msg);
  }

  private ensure(): { worker: Thread; ready: Promise<number | undefined> } {
    if (this.thread) return this.thread;
    // A replacement (after a thread died) is created by the main thread, so it
    // inherits the main thread's lowered priority: only a worker restart brings
    // the token path back to the start priority (raising it needs privilege).
    const entry = this.opts.entry ?? path.join(__dirname, 'thread-main.ts');
    const exited = (code: number) => new StreamRunnerError(`the worker's token thread exited (code ${code})`);
    const { worker, ready: readyMsg } = spawnThread<Extract<FromThread, { type: 'ready' }>>(entry, this.opts.config, exited);
    const ready = readyMsg.then((m) => m.tid);
    ready.catch(() => undefined);
    worker.on('message', (m: FromThread) => {
      if (m.type === 'ready') return;
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'progress') {
        p.opts.onProgress?.(m.progress);
        return;
      }
      this.pending.delete(m.id);
      if (m.type === 'done') p.resolve(m.outcome);
      else p.reject(new ModelStreamError(m.error));
    });
    worker.on('error', (err) => this.opts.logger.error({ err: err.message }, 'model stream thread failed'));
    worker.on('exit', (code) => {
      if (this.thread?.worker === worker) this.thread = undefined;
      const e = exited(code);
      if (!this.closed) {
        this.opts.logger.warn({ code, streams: this.pending.size }, 'model stream thread exited; its streams are retried and the next one starts a new thread');
        this.failAll(e);
      }
    });
    this.thread = { worker, ready };
    return this.thread;
  }

  private failAll(e: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }
}
