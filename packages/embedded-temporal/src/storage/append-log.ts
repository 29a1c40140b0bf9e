/**
 * Durable append-only record log with group commit.
 *
 * Appends run on one serial "drain" loop. Appends that arrive while a flush is in
 * progress (or in the same event-loop turn) are written with a single write +
 * fdatasync, which is what makes many concurrent small appends cheap: the fsync
 * cost is shared.
 *
 * A rewrite (compaction) writes its new content to a temporary file beside the
 * log while appends keep committing to the old file, so a big rewrite never holds
 * up appends. Appends requested after the rewrite was asked for are remembered
 * once committed and copied behind the new content when the drain loop switches
 * files (the way Redis rewrites its append-only file).
 */
import { constants as fsConstants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import {
  FRAME_OVERHEAD,
  HEADER_BYTES,
  checkPayload,
  encodeFrame,
  encodeHeader,
  scanLog,
  writeFrame,
} from './log-format';

export { AppendLogCorruptionError } from './log-format';

export interface AppendLogOptions {
  /** fdatasync after every group commit (default true). False still writes, for benchmarks and tests. */
  fsync?: boolean;
}

/** Counters for observing group commit; they only grow. */
export interface AppendLogStats {
  /** Group-commit writes of appended records (rewrites not included). */
  writes: number;
  /** fdatasync calls made for appends (0 when fsync is off). */
  syncs: number;
  /** Records appended durably since open. */
  records: number;
  /** Completed rewrites. */
  rewrites: number;
}

type Settle = { resolve: () => void; reject: (error: Error) => void };
/** seq numbers appends in call order; a rewrite carries those at or after its cutoff. */
type AppendOp = { kind: 'append'; frame: Buffer; seq: number } & Settle;
type SwitchOp = { kind: 'switch'; job: RewriteJob } & Settle;
type Op = AppendOp | SwitchOp;

interface RewriteJob {
  /** Appends with seq >= cutoff were requested after rewrite() was called: not in its content. */
  cutoff: number;
  /** Frames of such appends already committed to the old file; copied to the new one at the switch. */
  carried: Buffer[];
  temp?: FileHandle;
  /** Bytes in the temporary file so far. */
  size: number;
  abandoned: boolean;
}

/** Keeps one batch's buffer bounded under bursts; the remainder simply goes in the next commit. */
const MAX_COMMIT_BYTES = 8 * 1024 * 1024;
/** Rewrites are streamed in chunks of about this size rather than built in one buffer. */
const REWRITE_CHUNK_BYTES = 1024 * 1024;
const TEMP_SUFFIX = '.rewrite-tmp';

/** Two handles appending to one file would interleave records; catch that within a process. */
const openPaths = new Set<string>();

export class AppendLog {
  private readonly queue: Op[] = [];
  private draining = false;
  private drainScheduled = false;
  private idleWaiters: Array<() => void> = [];
  private failure: Error | undefined;
  private closePromise: Promise<void> | undefined;
  private readonly counters: AppendLogStats = { writes: 0, syncs: 0, records: 0, rewrites: 0 };
  private nextSeq = 0;
  private rewriting: RewriteJob | undefined;
  /** Settles (never rejects) when the running rewrite has switched files or given up. */
  private rewriteSettled: Promise<void> = Promise.resolve();

  private constructor(
    readonly filePath: string,
    private handle: FileHandle,
    private size: number,
    private readonly fsync: boolean,
  ) {}

  static async open(filePath: string, opts: AppendLogOptions = {}): Promise<{ log: AppendLog; records: Buffer[] }> {
    const absPath = path.resolve(filePath);
    if (openPaths.has(absPath)) throw new Error(`append log ${absPath} is already open in this process`);
    openPaths.add(absPath);
    const fsync = opts.fsync ?? true;
    let handle: FileHandle | undefined;
    try {
      await fsp.mkdir(path.dirname(absPath), { recursive: true });
      // A leftover temp file is an interrupted rewrite; the live file is still the old, complete one.
      await fsp.rm(absPath + TEMP_SUFFIX, { force: true });
      handle = await fsp.open(absPath, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o644);
      // Whole-file read: every record is handed to the caller anyway, and recovery needs random access.
      const image = await readAll(handle);
      const scan = scanLog(image, absPath);
      let size = scan.validEnd;
      if (scan.headerMissing) {
        await handle.truncate(0);
        await writeFully(handle, encodeHeader(), 0);
        if (fsync) {
          await handle.datasync();
          await syncDirectory(path.dirname(absPath));
        }
        size = HEADER_BYTES;
      } else if (scan.validEnd < image.length) {
        // Torn tail from a crash mid-write: it was never acknowledged, so dropping it is safe.
        await handle.truncate(scan.validEnd);
        if (fsync) await handle.datasync();
      }
      return { log: new AppendLog(absPath, handle, size, fsync), records: scan.records };
    } catch (error) {
      openPaths.delete(absPath);
      await handle?.close().catch(() => undefined);
      throw error;
    }
  }

  /** Bytes in the file, header included, counting appends already written but maybe not yet synced. */
  get sizeBytes(): number {
    return this.size;
  }

  get stats(): AppendLogStats {
    return { ...this.counters };
  }

  /**
   * Resolves once the record is durable. The payload is copied at call time, so the
   * caller may reuse its buffer immediately. Records land in call order and the
   * returned promises settle in call order. Empty payloads are rejected (see log-format).
   */
  append(payload: Buffer): Promise<void> {
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    let frame: Buffer;
    try {
      checkPayload(payload);
      frame = encodeFrame(payload);
    } catch (error) {
      return Promise.reject(error);
    }
    const seq = this.nextSeq++;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'append', frame, seq, resolve, reject });
      this.scheduleDrain();
    });
  }

  /**
   * Atomically replaces the file content with `records` followed by every append
   * requested after this call. `records` must describe the state as of this call;
   * it may be consumed later and asynchronously (an async iterable is awaited item
   * by item), so it must not read state that changes afterwards, and its buffers
   * must not be mutated until the promise settles. Appends requested before this
   * call are superseded by `records`. Appends keep settling while the rewrite
   * runs. One rewrite at a time: a second call meanwhile is rejected. If the
   * rewrite fails the old file, which holds everything, stays in place and the
   * log remains usable.
   */
  rewrite(records: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> {
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    if (this.rewriting) return Promise.reject(new Error(`append log ${this.filePath} is already being rewritten`));
    const job: RewriteJob = { cutoff: this.nextSeq, carried: [], size: 0, abandoned: false };
    this.rewriting = job;
    const done = this.runRewrite(job, records);
    this.rewriteSettled = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  /** Waits for every append and rewrite already requested, then releases the file. Idempotent. */
  close(): Promise<void> {
    this.closePromise ??= (async () => {
      await this.rewriteSettled;
      await this.whenIdle();
      openPaths.delete(this.filePath);
      await this.handle.close();
    })();
    return this.closePromise;
  }

  private refusal(): Error | undefined {
    if (this.closePromise) return new Error(`append log ${this.filePath} is closed`);
    if (this.failure) return this.failure;
    return undefined;
  }

  private scheduleDrain(): void {
    if (this.draining || this.drainScheduled) return;
    this.drainScheduled = true;
    // setImmediate rather than a microtask: callers resumed by the previous commit get to
    // enqueue their next append first, so they share one fdatasync instead of trickling in.
    setImmediate(() => {
      this.drainScheduled = false;
      void this.drain();
    });
  }

  private whenIdle(): Promise<void> {
    if (!this.draining && !this.drainScheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0];
        if (head.kind === 'switch') {
          this.queue.shift();
          await this.switchFiles(head);
          continue;
        }
        let count = 0;
        let bytes = 0;
        for (const op of this.queue) {
          if (op.kind !== 'append' || (count > 0 && bytes + op.frame.length > MAX_COMMIT_BYTES)) break;
          bytes += op.frame.length;
          count++;
        }
        await this.commit(this.queue.splice(0, count) as AppendOp[]);
      }
    } finally {
      this.draining = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  private async commit(batch: AppendOp[]): Promise<void> {
    const data = batch.length === 1 ? batch[0].frame : Buffer.concat(batch.map((op) => op.frame));
    try {
      await writeFully(this.handle, data, this.size);
      this.size += data.length;
      this.counters.writes++;
      if (this.fsync) {
        await this.handle.datasync();
        this.counters.syncs++;
      }
    } catch (error) {
      this.poison(error, batch);
      return;
    }
    this.counters.records += batch.length;
    const job = this.rewriting;
    if (job) for (const op of batch) if (op.seq >= job.cutoff) job.carried.push(op.frame);
    for (const op of batch) op.resolve();
  }

  /** Writes the new content to the temporary file, off the drain loop, then queues the switch. */
  private async runRewrite(job: RewriteJob, records: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> {
    try {
      job.temp = await fsp.open(this.filePath + TEMP_SUFFIX, 'w+', 0o644);
      job.size = await writeRecords(job.temp, records);
      if (this.fsync) await job.temp.datasync();
      if (job.abandoned) throw this.failure ?? new Error(`append log ${this.filePath} rewrite was abandoned`);
    } catch (error) {
      await this.abandon(job);
      throw asError(error);
    }
    // Behind every append already queued: those are committed to the old file
    // (and carried when they came after the cutoff) before the files switch.
    return new Promise<void>((resolve, reject) => {
      const refusal = this.failure;
      if (refusal) {
        void this.abandon(job).then(() => reject(refusal));
        return;
      }
      this.queue.push({ kind: 'switch', job, resolve, reject });
      this.scheduleDrain();
    });
  }

  /** Runs on the drain loop, so no append commits to either file meanwhile. */
  private async switchFiles(op: SwitchOp): Promise<void> {
    const { job } = op;
    const temp = job.temp!;
    try {
      if (job.carried.length > 0) {
        const tail = Buffer.concat(job.carried);
        await writeFully(temp, tail, job.size);
        job.size += tail.length;
        if (this.fsync) await temp.datasync();
      }
      await fsp.rename(this.filePath + TEMP_SUFFIX, this.filePath);
    } catch (error) {
      await this.abandon(job);
      op.reject(asError(error));
      return;
    }
    // The renamed file is now the log; keep appending through the handle we wrote it with.
    const previous = this.handle;
    this.handle = temp;
    this.size = job.size;
    this.rewriting = undefined;
    await previous.close().catch(() => undefined);
    try {
      if (this.fsync) await syncDirectory(path.dirname(this.filePath));
    } catch (error) {
      // Without a durable rename, later appends could vanish with the new inode after a crash.
      this.poison(error, [op]);
      return;
    }
    this.counters.rewrites++;
    op.resolve();
  }

  /** Drops a rewrite's temporary file; the old file still holds everything. Idempotent. */
  private async abandon(job: RewriteJob): Promise<void> {
    if (this.rewriting === job) this.rewriting = undefined;
    if (job.abandoned) return;
    job.abandoned = true;
    job.carried = [];
    await job.temp?.close().catch(() => undefined);
    await fsp.rm(this.filePath + TEMP_SUFFIX, { force: true }).catch(() => undefined);
  }

  /**
   * After a failed write or fdatasync the file's durable content is unknown (and on
   * Linux a retried fsync can falsely succeed), so the log refuses all further work.
   * Reopening recovers: whatever did not reach the disk is a torn tail.
   */
  private poison(error: unknown, batch: Settle[]): void {
    const cause = asError(error);
    this.failure = new Error(`append log ${this.filePath} failed and must be reopened: ${cause.message}`, {
      cause,
    });
    const failed = [...batch, ...this.queue.splice(0)];
    if (this.rewriting) void this.abandon(this.rewriting);
    for (const op of failed) op.reject(this.failure);
  }
}

async function readAll(handle: FileHandle): Promise<Buffer> {
  const { size } = await handle.stat();
  const image = Buffer.allocUnsafe(size);
  let offset = 0;
  while (offset < size) {
    const { bytesRead } = await handle.read(image, offset, size - offset, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return offset === size ? image : image.subarray(0, offset);
}

async function writeFully(handle: FileHandle, data: Buffer, position: number): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, position + offset);
    if (bytesWritten <= 0) throw new Error('write made no progress');
    offset += bytesWritten;
  }
}

/** Writes header + framed records in bounded chunks as they come; returns the resulting file size. */
async function writeRecords(handle: FileHandle, records: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<number> {
  await writeFully(handle, encodeHeader(), 0);
  let position = HEADER_BYTES;
  let pending: Buffer[] = [];
  let bytes = 0;
  const writeChunk = async () => {
    const chunk = Buffer.allocUnsafe(bytes);
    let offset = 0;
    for (const record of pending) offset = writeFrame(record, chunk, offset);
    await writeFully(handle, chunk, position);
    position += bytes;
    pending = [];
    bytes = 0;
  };
  for await (const record of records) {
    checkPayload(record);
    pending.push(record);
    bytes += FRAME_OVERHEAD + record.length;
    if (bytes >= REWRITE_CHUNK_BYTES) await writeChunk();
  }
  if (bytes > 0) await writeChunk();
  return position;
}

/** Makes a create or rename durable. Some platforms cannot fsync a directory; there it is a no-op. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fsp.open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw error;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
