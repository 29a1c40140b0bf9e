// The worker's way to the account's datastores: the registrations (read from
// the account's registry workflow by query, kept a few seconds), their
// connection details unsealed, and one open source per datastore reused by
// every call (a PostgreSQL pool, a SQLite thread, a knowledge base file), at
// most maxOpen of each kind: the least recently used is closed past it.
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { Logger } from 'pino';
import type { DatastoreRecord } from '../../../workflows/datastores';
import { queryLimits, readDatastoreRecords } from './records';
import { unsealSecret } from '../codec/sealed-secret';
import type { OutboundPolicy } from '../outbound/policy';
import { DocumentStore } from './documents';
import { documentsFile } from './files';
import { ConnectionDetails, openSql } from './open';
import type { QueryLimits, SqlDatastore } from './types';

export interface DatastoreSettings {
  /** DATASTORE_DIR: uploads and knowledge bases. */
  dir: string;
  /** DATASTORE_SQLITE_ROOT. */
  sqliteRoot?: string;
  /** DATASTORE_QUERY_TIMEOUT_MS and DATASTORE_MAX_ROWS: a registration's own limits win. */
  timeoutMs: number;
  maxRows: number;
  /** DATASTORE_MAX_OPEN: sources kept open at once, of each kind (default 64). */
  maxOpen?: number;
}

/** How long a registration read is reused: a deletion reaches running tools within this. */
const RECORDS_TTL_MS = 5000;
/** Accounts whose registrations are kept (each for RECORDS_TTL_MS); past it the oldest read goes. */
const MAX_ACCOUNTS_KEPT = 1000;
const DEFAULT_MAX_OPEN = 64;
/** What a source closed for the bound is given beyond its longest query, ms. */
const CLOSE_GRACE_MS = 1000;

/** Sets `key` as the most recently used entry of `map`, and returns what is past `max` (oldest first), removed. */
function keepRecent<K, V>(map: Map<K, V>, key: K, value: V, max: number): V[] {
  map.delete(key);
  map.set(key, value);
  const out: V[] = [];
  for (const [k, v] of map) {
    if (map.size <= max) break;
    map.delete(k);
    out.push(v);
  }
  return out;
}

export class DatastoreAccess {
  private readonly recordCache = new Map<string, { at: number; records: Promise<DatastoreRecord[]> }>();
  private readonly sources = new Map<string, { key: string; source: Promise<SqlDatastore>; timeoutMs: number }>();
  private readonly knowledge = new Map<string, { store: DocumentStore; timeoutMs: number }>();

  constructor(
    private readonly opts: {
      client: Client;
      codec: PayloadCodec;
      policy: OutboundPolicy;
      settings: DatastoreSettings;
      logger: Logger;
      /** Opens a SQL source (tests count what is opened and closed); default: its driver. */
      open?: (record: DatastoreRecord) => Promise<SqlDatastore>;
    },
  ) {}

  /** How many of each are held: SQL sources, knowledge bases, accounts' registrations. */
  get held(): { sql: number; documents: number; accounts: number } {
    return { sql: this.sources.size, documents: this.knowledge.size, accounts: this.recordCache.size };
  }

  /** The account's registrations; `fresh` skips the cache (a run's start binds against the present). */
  records(account: string, fresh = false): Promise<DatastoreRecord[]> {
    const hit = this.recordCache.get(account);
    if (!fresh && hit && Date.now() - hit.at < RECORDS_TTL_MS) return hit.records;
    const records = readDatastoreRecords(this.opts.client, account);
    keepRecent(this.recordCache, account, { at: Date.now(), records }, MAX_ACCOUNTS_KEPT);
    records.catch(() => this.recordCache.delete(account));
    return records;
  }

  async record(account: string, id: string): Promise<DatastoreRecord | undefined> {
    return (await this.records(account)).find((r) => r.id === id);
  }

  limits(record: DatastoreRecord): QueryLimits {
    return queryLimits(record, this.opts.settings);
  }

  /** The open SQL source of a registration (opened on first use; a re-registration with other details opens anew). */
  sql(record: DatastoreRecord): Promise<SqlDatastore> {
    const key = record.connection ?? '';
    const held = this.sources.get(record.id);
    const timeoutMs = this.limits(record).timeoutMs;
    if (held?.key === key) {
      keepRecent(this.sources, record.id, held, this.maxOpen);
      return held.source;
    }
    if (held) void held.source.then((s) => s.close()).catch(() => undefined);
    const source = (this.opts.open ?? ((r) => this.openSql(r)))(record);
    const entry = { key, source, timeoutMs };
    for (const old of keepRecent(this.sources, record.id, entry, this.maxOpen))
      this.later(old.timeoutMs, () => old.source.then((s) => s.close()));
    source.catch(() => this.sources.get(record.id) === entry && this.sources.delete(record.id));
    return source;
  }

  documents(record: DatastoreRecord): DocumentStore {
    const held = this.knowledge.get(record.id);
    const store =
      held?.store ?? DocumentStore.open(documentsFile(this.opts.settings.dir, record.id), { readonly: true });
    const entry = held ?? { store, timeoutMs: this.limits(record).timeoutMs };
    for (const old of keepRecent(this.knowledge, record.id, entry, this.maxOpen))
      this.later(old.timeoutMs, async () => old.store.close());
    return store;
  }

  async close(): Promise<void> {
    const open = [...this.sources.values()];
    this.sources.clear();
    await Promise.all(open.map((o) => o.source.then((s) => s.close()).catch(() => undefined)));
    for (const { store } of this.knowledge.values()) store.close();
    this.knowledge.clear();
  }

  private get maxOpen(): number {
    return this.opts.settings.maxOpen ?? DEFAULT_MAX_OPEN;
  }

  /** Closes a source put out by the bound once a query it may be running has had its whole time. */
  private later(timeoutMs: number, close: () => Promise<void>): void {
    setTimeout(() => void close().catch(() => undefined), timeoutMs + CLOSE_GRACE_MS).unref();
  }

  private async openSql(record: DatastoreRecord): Promise<SqlDatastore> {
    if (record.type === 'documents' || !record.connection)
      throw new TypeError(`datastore ${record.id} is not a SQL datastore`);
    const conn = await unsealSecret<ConnectionDetails>(this.opts.codec, record.connection);
    return openSql(record.type, conn, !!record.uploaded, {
      policy: this.opts.policy,
      sqliteRoot: this.opts.settings.sqliteRoot,
    });
  }
}
