/**
 * The storage interface the dev-server engine persists through, with an in-memory
 * implementation (no durability) and a file-backed one built on AppendLog.
 *
 * The engine owns the authoritative in-memory state; a Store only records changes
 * so that state can be rebuilt after a restart. Each write() batch is one
 * append-log record, which is what makes a batch all-or-nothing across a crash.
 */
import { AppendLog, type AppendLogStats } from './append-log';
import { HEADER_BYTES, FRAME_OVERHEAD } from './log-format';
import { batchOverhead, decodeBatch, encodeBatch, mutationSize } from './batch-codec';

export type Mutation =
  | { op: 'put'; key: string; value: Buffer } // replace the key's value
  | { op: 'append'; key: string; value: Buffer } // add to the key's ordered list of appended items
  | { op: 'delete'; key: string }; // drop the key's value AND its appended items

export interface RecoveredEntry {
  value?: Buffer;
  appends: Buffer[];
}

export interface Store {
  /** Durably applies the batch as one atomic unit (all or nothing after a crash). Resolves when durable. */
  write(batch: Mutation[]): Promise<void>;
  /**
   * Rewrites storage to hold exactly this live state (the engine supplies it) plus
   * every write issued after this call; used for compaction. `live` describes the
   * state including every write already issued, and may be consumed lazily, after
   * this returns: it must be a snapshot, not a view of state that keeps changing.
   * Writes issued meanwhile become durable without waiting for the compaction.
   */
  compact(live: Iterable<Mutation>): Promise<void>;
  /** True when the engine should call compact (e.g. file > 64 MiB and > 2x the bytes live after the last compaction). */
  shouldCompact(): boolean;
  close(): Promise<void>;
  /** False for stores that keep nothing: the engine then skips encoding batches at all. */
  readonly persistent: boolean;
}

export interface FileStoreOptions {
  /** fdatasync each group commit (default true). */
  fsync?: boolean;
  /** shouldCompact() stays false below this file size (default 64 MiB). */
  compactMinBytes?: number;
  /** shouldCompact() needs the file to exceed this multiple of the last compacted size (default 2). */
  compactRatio?: number;
}

const DEFAULT_COMPACT_MIN_BYTES = 64 * 1024 * 1024;
const DEFAULT_COMPACT_RATIO = 2;
/** Compaction output is split into records of about this size so no single buffer gets huge. */
const COMPACT_RECORD_BYTES = 1024 * 1024;

/** Applies one mutation to a recovered-state map with the documented put/append/delete semantics. */
export function applyMutation(state: Map<string, RecoveredEntry>, m: Mutation): void {
  if (m.op === 'delete') {
    state.delete(m.key);
    return;
  }
  let entry = state.get(m.key);
  if (!entry) {
    entry = { appends: [] };
    state.set(m.key, entry);
  }
  if (m.op === 'put') entry.value = m.value;
  else entry.appends.push(m.value);
}

/**
 * No durability: write() validates the batch (so engine bugs surface the same way
 * in both modes) and resolves immediately.
 */
export class MemoryStore implements Store {
  readonly persistent = false;
  private closed = false;

  write(batch: Mutation[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    try {
      batch.forEach(mutationSize);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  compact(_live: Iterable<Mutation>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return Promise.resolve();
  }

  shouldCompact(): boolean {
    return false;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

export class FileStore implements Store {
  readonly persistent = true;
  private compacting = false;
  /** Settles after the most recent write; lets an empty batch still resolve in call order. */
  private lastWrite: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly log: AppendLog,
    /** File size right after the last compaction (or an estimate of it for a freshly opened file). */
    private compactedBytes: number,
    private readonly compactMinBytes: number,
    private readonly compactRatio: number,
  ) {}

  static async open(
    path: string,
    opts: FileStoreOptions = {},
  ): Promise<{ store: FileStore; state: Map<string, RecoveredEntry> }> {
    const { log, records } = await AppendLog.open(path, { fsync: opts.fsync });
    const state = new Map<string, RecoveredEntry>();
    try {
      records.forEach((record, index) => {
        let batch: Mutation[];
        try {
          batch = decodeBatch(record);
        } catch (error) {
          throw new Error(`${log.filePath}: record ${index} is not a valid batch: ${(error as Error).message}`, {
            cause: error,
          });
        }
        for (const m of batch) applyMutation(state, m);
      });
    } catch (error) {
      await log.close();
      throw error;
    }
    const store = new FileStore(
      log,
      estimateCompactedBytes(state),
      opts.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES,
      opts.compactRatio ?? DEFAULT_COMPACT_RATIO,
    );
    return { store, state };
  }

  /**
   * The batch is encoded (and its buffers copied) synchronously, so the engine may
   * reuse them right away. Batches become durable, and their promises resolve, in
   * call order.
   */
  write(batch: Mutation[]): Promise<void> {
    if (batch.length === 0) return this.closed ? Promise.reject(new Error('store is closed')) : this.lastWrite;
    let record: Buffer;
    try {
      record = encodeBatch(batch);
    } catch (error) {
      return Promise.reject(error);
    }
    const written = this.log.append(record);
    this.lastWrite = written.catch(() => undefined);
    return written;
  }

  /**
   * Encodes `live` into records a few at a time, yielding to the event loop
   * between them, so a large state never blocks the process for long. If
   * compaction fails the old file stays authoritative.
   */
  compact(live: Iterable<Mutation>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    let size = HEADER_BYTES;
    const records = async function* (): AsyncGenerator<Buffer> {
      for (const record of encodeInRecords(live)) {
        size += FRAME_OVERHEAD + record.length;
        yield record;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    this.compacting = true;
    return this.log.rewrite(records()).then(
      () => {
        this.compactedBytes = size;
        this.compacting = false;
      },
      (err) => {
        this.compacting = false;
        throw err;
      },
    );
  }

  shouldCompact(): boolean {
    // One compaction at a time: while a rewrite runs the file still looks big,
    // and snapshotting the whole state again on every flush would only pile up.
    if (this.compacting) return false;
    const size = this.log.sizeBytes;
    return size > this.compactMinBytes && size > this.compactRatio * this.compactedBytes;
  }

  /** Waits for pending writes to become durable, then releases the file. */
  close(): Promise<void> {
    this.closed = true;
    return this.log.close();
  }

  get sizeBytes(): number {
    return this.log.sizeBytes;
  }

  /** Group-commit counters of the underlying log (for tests and diagnostics). */
  get stats(): AppendLogStats {
    return this.log.stats;
  }
}

function* encodeInRecords(live: Iterable<Mutation>): Generator<Buffer> {
  let chunk: Mutation[] = [];
  let sizes: number[] = [];
  let bytes = 0;
  for (const m of live) {
    const size = mutationSize(m);
    if (chunk.length > 0 && bytes + size > COMPACT_RECORD_BYTES) {
      yield encodeBatch(chunk, sizes);
      chunk = [];
      sizes = [];
      bytes = 0;
    }
    chunk.push(m);
    sizes.push(size);
    bytes += size;
  }
  if (chunk.length > 0) yield encodeBatch(chunk, sizes);
}

/** What compacting the recovered state would roughly produce; stands in for the last compaction size. */
function estimateCompactedBytes(state: Map<string, RecoveredEntry>): number {
  let bytes = HEADER_BYTES;
  for (const [key, entry] of state) {
    if (entry.value) bytes += mutationSize({ op: 'put', key, value: entry.value });
    for (const value of entry.appends) bytes += mutationSize({ op: 'append', key, value });
  }
  const records = Math.ceil(bytes / COMPACT_RECORD_BYTES);
  return bytes + records * (FRAME_OVERHEAD + batchOverhead(0xffff));
}
