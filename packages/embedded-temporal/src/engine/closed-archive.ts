// Closed runs beyond the most recent few are moved out of memory into a side
// file and read back on demand, so a long-lived server's memory stays flat.
// The durable log remains the source of truth; this file is a cache rebuilt at
// every start (so it needs no fsync and no recovery of its own).
import fs from 'node:fs';
import type { Execution } from './state';
import type { VisibilityRecord } from '../visibility/query';
import { decodeHistoryBatch, historyBatch, serializeExecution, fromJsonBuffer, packHistory } from './persistence';

/** A run as the durable log stores it: state JSON and the protobuf History of all its events. */
export interface RawRun {
  state: Buffer;
  history: Buffer;
}

export interface ArchivedRun {
  key: string;
  entry: ArchiveEntry;
}

export interface ArchiveEntry {
  offset: number;
  stateLength: number;
  historyLength: number;
  namespace: string;
  closeTime: number;
  /** Kept so List/Count can filter archived runs without reading them. */
  record: VisibilityRecord;
}

export class ClosedArchive {
  private readonly fd: number;
  private size = 0;
  private readonly index = new Map<string, ArchiveEntry>();

  constructor(readonly path: string) {
    this.fd = fs.openSync(path, 'w+');
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get count(): number {
    return this.index.size;
  }

  /** `encoded`: the run's state and history exactly as the log holds them, when the caller has them (saves encoding). */
  put(key: string, e: Execution, record: VisibilityRecord, encoded?: RawRun): void {
    const state = encoded?.state ?? serializeExecution(e);
    const history = encoded?.history ?? historyBatch(e.history);
    const buf = Buffer.concat([state, history]);
    fs.writeSync(this.fd, buf, 0, buf.length, this.size);
    this.index.set(key, {
      offset: this.size,
      stateLength: state.length,
      historyLength: history.length,
      namespace: e.namespace,
      closeTime: e.closeTime ?? 0,
      record,
    });
    this.size += buf.length;
  }

  /** Reads a run back (it stays in the archive until deleted), with its encoded form. */
  read(key: string): ({ e: Execution } & RawRun) | undefined {
    const entry = this.index.get(key);
    if (!entry) return undefined;
    const { state, history } = this.readRaw(entry);
    const e = fromJsonBuffer<Execution>(state);
    e.history = decodeHistoryBatch(history);
    packHistory(e, history);
    return { e, state, history };
  }

  /**
   * The archived runs as of now. Entries never change and their bytes stay in
   * the file until it is deleted at shutdown, so they can be read later even if
   * the run has left the archive meanwhile.
   */
  snapshot(): ArchivedRun[] {
    return [...this.index].map(([key, entry]) => ({ key, entry }));
  }

  readRaw(entry: ArchiveEntry): RawRun {
    const buf = Buffer.allocUnsafeSlow(entry.stateLength + entry.historyLength);
    fs.readSync(this.fd, buf, 0, buf.length, entry.offset);
    return { state: buf.subarray(0, entry.stateLength), history: buf.subarray(entry.stateLength) };
  }

  delete(key: string): void {
    this.index.delete(key);
  }

  /** Archived runs of a namespace with their visibility records. */
  *records(namespace: string): Iterable<{ key: string; record: VisibilityRecord }> {
    for (const [key, entry] of this.index) if (entry.namespace === namespace) yield { key, record: entry.record };
  }

  /** Keys of archived runs closed before `time` in a namespace whose retention says so. */
  *expired(retentionOf: (namespace: string) => number | undefined, now: number): Iterable<string> {
    for (const [key, entry] of this.index) {
      const r = retentionOf(entry.namespace);
      if (r !== undefined && entry.closeTime + r <= now) yield key;
    }
  }

  close(): void {
    try {
      fs.closeSync(this.fd);
      fs.rmSync(this.path, { force: true });
    } catch {
      // already gone
    }
  }
}
