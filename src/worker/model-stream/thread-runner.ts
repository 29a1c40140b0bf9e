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
import type { Logger } from 'pino';
import {
  StreamRunnerError,
  type ModelStreamRunner,
  type StreamOutcome,
  type StreamRequest,
  type StreamRunOptions,
  type TurnProgress,
} from '../../../activities/model-stream';
import { HelperThread } from '../../common/helper-thread';
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
  reject: (e: Error) => void;
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

export class ThreadedModelStream
  extends HelperThread<Pending, Extract<FromThread, { type: 'ready' }>>
  implements ModelStreamRunner
{
  // A replacement (after a thread died) is created by the main thread, so it
  // inherits the main thread's lowered priority: only a worker restart brings
  // the token path back to the start priority (raising it needs privilege).
  constructor(opts: ThreadedModelStreamOptions) {
    super({
      entry: opts.entry ?? path.join(__dirname, 'thread-main.ts'),
      workerData: opts.config,
      logger: opts.logger,
      name: 'model stream thread',
      onLoss: 'its streams are retried and the next one starts a new thread',
      exitError: (code) => new StreamRunnerError(`the worker's token thread exited (code ${code})`),
    });
  }

  /** Starts the thread; resolves with its OS thread id (Linux) once it can take streams. */
  start(): Promise<number | undefined> {
    return this.thread().ready.then((m) => m.tid);
  }

  run(req: StreamRequest, progress: TurnProgress, opts: StreamRunOptions): Promise<StreamOutcome> {
    if (this.closed) return Promise.reject(new StreamRunnerError('the worker is stopping: its token thread is closed'));
    if (opts.signal.aborted) return Promise.reject(new Error('model turn cancelled'));
    const id = this.nextId();
    const { worker } = this.thread();
    const post = (msg: ToThread) => worker.postMessage(msg);
    return new Promise<StreamOutcome>((resolve, reject) => {
      const onAbort = () => post({ type: 'cancel', id });
      opts.signal.addEventListener('abort', onAbort, { once: true });
      const settle =
        <T>(fn: (v: T) => void) =>
        (v: T) => {
          opts.signal.removeEventListener('abort', onAbort);
          fn(v);
        };
      this.pending.set(id, { opts, resolve: settle(resolve), reject: settle(reject) });
      post({ type: 'run', id, req, progress });
    });
  }

  /** Stops the thread; streams still running fail (retryable) and Temporal retries them elsewhere. */
  close(): Promise<void> {
    return this.stop(new StreamRunnerError('the worker stopped its token thread'));
  }

  protected onMessage(msg: unknown): void {
    const m = msg as Exclude<FromThread, { type: 'ready' }>;
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'progress') {
      p.opts.onProgress?.(m.progress);
      return;
    }
    this.pending.delete(m.id);
    if (m.type === 'done') p.resolve(m.outcome);
    else p.reject(new ModelStreamError(m.error));
  }
}
