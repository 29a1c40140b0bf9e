// A registered SQLite file as a SqlDatastore. Every call runs in the
// datastore's reader process (sqlite-thread.ts): better-sqlite3 is synchronous,
// so a long statement here would stall the worker's whole event loop, and it
// cannot be interrupted — only killing the process that runs it stops it.
//
// One reader per datastore, started on the first call and let go after
// `idleMs` without one; calls queue in order behind the one running, and each
// one's time limit starts when it is handed to the reader, not when queued.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { FromReader, ReaderCall, ReaderError, ToReader } from './sqlite-thread';
import {
  cancelledQuery,
  DatastoreConnectionError,
  DatastoreQueryError,
  type QueryLimits,
  type QueryResult,
  type SqlDatastore,
  type TableDescription,
} from './types';
import { TS_LOADER_ARGS } from '../ts-loader';

const ENTRY = path.join(__dirname, `sqlite-thread${path.extname(__filename)}`);
const DEFAULT_IDLE_MS = 60_000;
/** check() and describe() take no limit from the caller, yet one stuck on a lock must still end. */
const METADATA_LIMIT_MS = 10_000;
/** A reader not ready by then (TypeScript compiling on a starved machine takes a second) never will be. */
const BOOT_LIMIT_MS = 15_000;

interface Job {
  call: ReaderCall;
  limitMs: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  /** Its caller's signal fired: it is not to start, or is stopped. */
  cancelled?: boolean;
}

interface Reader {
  proc: ChildProcess;
  /** Resolves on the reader's `ready`; rejects if it exits first. */
  ready: Promise<void>;
}

interface InFlight {
  id: number;
  job: Job;
  reader: Reader;
  timer: NodeJS.Timeout;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export function openSqlite(file: string, opts: { idleMs?: number } = {}): SqlDatastore {
  return new SqliteDatastore(path.resolve(file), opts.idleMs ?? DEFAULT_IDLE_MS);
}

/** The reader's entry is TypeScript unless the service was compiled: the loader loads it then. */
function readerExecArgv(): string[] {
  return ENTRY.endsWith('.ts') ? [...TS_LOADER_ARGS] : [];
}

function closedError(): DatastoreConnectionError {
  return new DatastoreConnectionError('the datastore was closed', false);
}

function toError(e: ReaderError): Error {
  if (e.kind === 'connection') return new DatastoreConnectionError(e.message, e.retryable);
  return new DatastoreQueryError(e.message, e.kind);
}

class SqliteDatastore implements SqlDatastore {
  readonly dialect = 'sqlite' as const;
  private readonly queue: Job[] = [];
  private current?: Reader;
  private inFlight?: InFlight;
  private draining = false;
  private closed = false;
  private idleTimer?: NodeJS.Timeout;
  private lastId = 0;

  constructor(
    private readonly file: string,
    private readonly idleMs: number,
  ) {}

  async check(): Promise<void> {
    await this.submit({ op: 'check' }, METADATA_LIMIT_MS);
  }

  describe(): Promise<TableDescription[]> {
    return this.submit({ op: 'describe' }, METADATA_LIMIT_MS) as Promise<TableDescription[]>;
  }

  query(sql: string, params: readonly unknown[], limits: QueryLimits, signal?: AbortSignal): Promise<QueryResult> {
    const call: ReaderCall = { op: 'query', sql, params: params.map(toBindable), maxRows: limits.maxRows };
    return this.submit(call, limits.timeoutMs, signal) as Promise<QueryResult>;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(closedError());
    this.fail(this.inFlight?.id, closedError());
    await this.stopReader();
  }

  private submit(call: ReaderCall, limitMs: number, signal?: AbortSignal): Promise<unknown> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(cancelledQuery());
    return new Promise((resolve, reject) => {
      const stop = () => this.cancel(job);
      const settled =
        <T>(settle: (v: T) => void) =>
        (v: T) => {
          signal?.removeEventListener('abort', stop);
          settle(v);
        };
      const job: Job = { call, limitMs, resolve: settled(resolve), reject: settled(reject) };
      signal?.addEventListener('abort', stop, { once: true });
      this.queue.push(job);
      void this.drain();
    });
  }

  /** A queued job leaves the queue; the one in flight is stopped the way a timeout stops it. */
  private cancel(job: Job): void {
    job.cancelled = true;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      job.reject(cancelledQuery());
    } else if (this.inFlight?.job === job) {
      this.stopInFlight(this.inFlight.id, cancelledQuery());
    }
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    clearTimeout(this.idleTimer);
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) {
        await this.run(job).then(job.resolve, job.reject);
      }
    } finally {
      this.draining = false;
      this.idle();
    }
  }

  private async run(job: Job): Promise<unknown> {
    const reader = this.reader();
    await reader.ready.catch((err: Error) => {
      throw this.closed ? closedError() : err;
    });
    if (this.closed) throw closedError();
    if (job.cancelled) throw cancelledQuery();
    setHeld(reader.proc, true);
    return new Promise((resolve, reject) => {
      const id = ++this.lastId;
      const timer = setTimeout(() => this.timeOut(id, job.limitMs), job.limitMs);
      this.inFlight = { id, job, reader, timer, resolve, reject };
      reader.proc.send({ ...job.call, id } satisfies ToReader);
    });
  }

  private timeOut(id: number, limitMs: number): void {
    const seconds = Math.round(limitMs / 100) / 10;
    this.stopInFlight(
      id,
      new DatastoreQueryError(`the query ran past its time limit of ${seconds} s and was cancelled`, 'timeout'),
    );
  }

  /** Ends call `id` with `err`. Killing the reader is what stops its statement; the next call starts another. */
  private stopInFlight(id: number, err: Error): void {
    this.fail(id, err);
    void this.stopReader();
  }

  /** Takes the call `id` off the reader if it is the one in flight (a late answer finds nothing). */
  private takeInFlight(id: number | undefined): InFlight | undefined {
    const f = this.inFlight;
    if (!f || f.id !== id) return undefined;
    this.inFlight = undefined;
    clearTimeout(f.timer);
    return f;
  }

  private succeed(id: number, result: unknown): void {
    this.takeInFlight(id)?.resolve(result);
  }

  private fail(id: number | undefined, err: Error): void {
    this.takeInFlight(id)?.reject(err);
  }

  private reader(): Reader {
    if (this.current) return this.current;
    const proc = fork(ENTRY, [this.file], {
      execArgv: readerExecArgv(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let onReady!: () => void;
    let onEarlyExit!: (e: Error) => void;
    const ready = new Promise<void>((resolve, reject) => ((onReady = resolve), (onEarlyExit = reject)));
    const reader: Reader = { proc, ready };
    const boot = setTimeout(() => proc.kill('SIGKILL'), BOOT_LIMIT_MS);
    proc.on('message', (m: FromReader) => {
      if (m.type === 'ready') {
        clearTimeout(boot);
        onReady();
      } else if (m.type === 'done') this.succeed(m.id, m.result);
      else this.fail(m.id, toError(m.error));
    });
    // A failed spawn reports `error` and then `exit`: the exit handler speaks for both.
    proc.on('error', () => undefined);
    proc.on('exit', (code, signal) => {
      clearTimeout(boot);
      if (this.current === reader) this.current = undefined;
      const lost = new DatastoreConnectionError(
        `the SQLite reader process exited unexpectedly (${signal ?? `code ${code}`})`,
        true,
      );
      onEarlyExit(lost);
      if (this.inFlight?.reader === reader) this.fail(this.inFlight.id, lost);
    });
    this.current = reader;
    return reader;
  }

  /** Resolves once the reader is gone. */
  private stopReader(): Promise<void> {
    const proc = this.current?.proc;
    this.current = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    return gone;
  }

  /** Nothing to do: the reader no longer keeps the process alive, and goes after `idleMs`. */
  private idle(): void {
    if (this.closed || !this.current) return;
    setHeld(this.current.proc, false);
    this.idleTimer = setTimeout(() => void this.stopReader(), this.idleMs);
    this.idleTimer.unref();
  }
}

/** Whether the reader keeps this process's event loop alive (only while it works for it). */
function setHeld(proc: ChildProcess, held: boolean): void {
  if (held) {
    proc.ref();
    proc.channel?.ref();
  } else {
    proc.unref();
    proc.channel?.unref();
  }
}

/** What IPC and SQLite can carry: booleans as 0/1, dates as ISO text, other objects as JSON. */
function toBindable(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint' || v instanceof Uint8Array) return v;
  if (v instanceof Date) return v.toISOString();
  return JSON.stringify(v);
}
