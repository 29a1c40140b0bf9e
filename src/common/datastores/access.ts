// The worker's way to the account's datastores: the registrations (read from
// the account's registry workflow by query, kept a few seconds), their
// connection details unsealed, and one open source per datastore reused by
// every call (a PostgreSQL pool, a SQLite thread, a knowledge base file).
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
}

/** How long a registration read is reused: a deletion reaches running tools within this. */
const RECORDS_TTL_MS = 5000;

export class DatastoreAccess {
  private readonly recordCache = new Map<string, { at: number; records: Promise<DatastoreRecord[]> }>();
  private readonly sources = new Map<string, { key: string; source: Promise<SqlDatastore> }>();
  private readonly knowledge = new Map<string, DocumentStore>();

  constructor(
    private readonly opts: {
      client: Client;
      codec: PayloadCodec;
      policy: OutboundPolicy;
      settings: DatastoreSettings;
      logger: Logger;
    },
  ) {}

  /** The account's registrations; `fresh` skips the cache (a run's start binds against the present). */
  records(account: string, fresh = false): Promise<DatastoreRecord[]> {
    const hit = this.recordCache.get(account);
    if (!fresh && hit && Date.now() - hit.at < RECORDS_TTL_MS) return hit.records;
    const records = readDatastoreRecords(this.opts.client, account);
    this.recordCache.set(account, { at: Date.now(), records });
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
    if (held?.key === key) return held.source;
    if (held) void held.source.then((s) => s.close()).catch(() => undefined);
    const source = this.openSql(record);
    this.sources.set(record.id, { key, source });
    source.catch(() => this.sources.delete(record.id));
    return source;
  }

  documents(record: DatastoreRecord): DocumentStore {
    let store = this.knowledge.get(record.id);
    if (!store) {
      store = DocumentStore.open(documentsFile(this.opts.settings.dir, record.id), { readonly: true });
      this.knowledge.set(record.id, store);
    }
    return store;
  }

  async close(): Promise<void> {
    const open = [...this.sources.values()];
    this.sources.clear();
    await Promise.all(open.map((o) => o.source.then((s) => s.close()).catch(() => undefined)));
    for (const store of this.knowledge.values()) store.close();
    this.knowledge.clear();
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
