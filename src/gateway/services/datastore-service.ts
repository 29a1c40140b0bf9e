// The gateway's operations on datastores: registration (the source checked
// first, its connection details sealed, the record kept by the account's
// registry workflow), listing without secrets, deletion, the documents of a
// knowledge base, and the check of a run request's datastores and queries.
// Another account's datastore is a 404, like one that does not exist. What
// the document cannot state (a source that cannot be opened, a reference to a
// datastore the account does not have) is a 422.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { Client, Connection } from '@temporalio/client';
import { ApplicationFailure, type PayloadCodec } from '@temporalio/common';
import type { Config } from '../../common/config';
import { datastoreDir } from '../../common/config';
import { ConflictError, NotFoundError, UnprocessableRequestError } from '../../common/errors';
import { sealSecret } from '../../common/codec/sealed-secret';
import type { OutboundPolicy } from '../../common/outbound/policy';
import type { DatastoreRecord, DatastoresState } from '../../../workflows/datastores';
import type { RequestedDatastore, RequestedQuery } from '../../../workflows/types';
import { bindDatastores } from '../../common/datastores/bindings';
import { queryLimits, readDatastoreRecords } from '../../common/datastores/records';
import { DocumentStore } from '../../common/datastores/documents';
import { documentsFile, fileUnderRoot, uploadFile } from '../../common/datastores/files';
import { ConnectionDetails, openSql } from '../../common/datastores/open';
import {
  DatastoreConnectionError,
  DatastoreQueryError,
  type DocumentInfo,
  type DocumentInput,
} from '../../common/datastores/types';
import type { DatastoreRegistration } from '../schemas/datastore';
import { temporalCall } from './temporal-errors';
import {
  datastoresWorkflowId,
  NAME_TAKEN,
  registerDatastoreUpdate,
  removeDatastoreUpdate,
  TOO_MANY,
} from '../../../workflows/definitions';

export interface DatastoreView {
  id: string;
  name: string;
  type: DatastoreRecord['type'];
  description: string | null;
  allow_sql: boolean;
  query_timeout_ms: number;
  max_rows: number;
  created_at: string;
  /** sqlite: the service keeps a copy of an uploaded file. */
  uploaded?: boolean;
  /** documents: how many it holds. */
  documents?: number;
}

type Settings = Pick<
  Config,
  | 'TEMPORAL_TASK_QUEUE'
  | 'DATASTORE_DIR'
  | 'DATA_DIR'
  | 'DATASTORE_SQLITE_ROOT'
  | 'DATASTORE_QUERY_TIMEOUT_MS'
  | 'DATASTORE_MAX_ROWS'
>;

const DEADLINE_MS = 10_000;

export class DatastoreService {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly codec: PayloadCodec,
    private readonly policy: OutboundPolicy,
    private readonly config: Settings,
  ) {}

  private get dir(): string {
    return datastoreDir(this.config);
  }

  records(account: string): Promise<DatastoreRecord[]> {
    return this.call(() => readDatastoreRecords(this.client, account));
  }

  async list(account: string): Promise<DatastoreView[]> {
    return (await this.records(account))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map((r) => this.view(r));
  }

  async get(account: string, id: string): Promise<DatastoreView> {
    return this.view(await this.record(account, id));
  }

  async register(account: string, body: DatastoreRegistration): Promise<DatastoreView> {
    const id = newId();
    const base = {
      id,
      name: body.name,
      type: body.type,
      allow_sql: 'allow_sql' in body ? body.allow_sql : false,
      created_at: new Date().toISOString(),
      ...limitsOf(body),
    };
    if (body.type === 'documents') {
      DocumentStore.open(documentsFile(this.ensureDir(), id)).close();
      return this.keep(account, base, () => fs.rmSync(documentsFile(this.dir, id), { force: true }));
    }
    const conn: ConnectionDetails =
      body.type === 'postgres' ? { connection_url: body.connection_url } : { path: this.underRoot(body.path) };
    await this.check(body.type, conn, false, body.type === 'postgres' ? 'body.connection_url' : 'body.path');
    return this.keep(account, { ...base, connection: await sealSecret(this.codec, conn) });
  }

  /** An uploaded SQLite database: the service keeps a copy in DATASTORE_DIR. */
  async registerUpload(
    account: string,
    fields: { name: string; description?: string; allow_sql: boolean; query_timeout_ms?: number; max_rows?: number },
    file: Buffer,
  ): Promise<DatastoreView> {
    // SQLite opens an empty file as an empty database, so the check below would pass it; a database
    // file is never empty (its 100-byte header comes first), and a user who sent nothing meant something else.
    if (file.length === 0)
      throw UnprocessableRequestError.at(
        'body.file',
        'the datastore could not be opened: the file is empty (a SQLite database never is)',
        'unreachable',
      );
    const id = newId();
    const target = uploadFile(this.ensureDir(), id);
    fs.writeFileSync(`${target}.part`, file, { mode: 0o600 });
    fs.renameSync(`${target}.part`, target);
    const drop = () => fs.rmSync(target, { force: true });
    try {
      await this.check('sqlite', { path: target }, true, 'body.file');
    } catch (err) {
      drop();
      throw err;
    }
    const record = {
      id,
      name: fields.name,
      type: 'sqlite' as const,
      allow_sql: fields.allow_sql,
      uploaded: true,
      created_at: new Date().toISOString(),
      ...limitsOf(fields),
    };
    return this.keep(account, { ...record, connection: await sealSecret(this.codec, { path: target }) }, drop);
  }

  async remove(account: string, id: string): Promise<void> {
    const removed = await this.call(
      () =>
        this.client.workflow
          .getHandle(datastoresWorkflowId(account))
          .executeUpdate(removeDatastoreUpdate, { args: [{ id }] }),
      'datastore not found',
    );
    if (!removed) throw new NotFoundError('datastore not found');
    if (removed.type === 'documents') fs.rmSync(documentsFile(this.dir, id), { force: true });
    if (removed.uploaded) fs.rmSync(uploadFile(this.dir, id), { force: true });
  }

  /** Adds `docs` in order; a document the store refuses is a 422 at `pathOf(its index)`. */
  async addDocuments(
    account: string,
    id: string,
    docs: DocumentInput[],
    pathOf: (index: number) => string,
  ): Promise<DocumentInfo[]> {
    return this.withDocuments(account, id, (store) =>
      docs.map((d, i) => {
        try {
          return store.add(d);
        } catch (err) {
          if (err instanceof TypeError) throw UnprocessableRequestError.at(pathOf(i), err.message, 'invalid_document');
          throw err;
        }
      }),
    );
  }

  async listDocuments(
    account: string,
    id: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ documents: DocumentInfo[]; next_cursor: string | null }> {
    return this.withDocuments(account, id, (store) => {
      const documents = store.list({ limit: page.limit + 1, after: page.cursor });
      const more = documents.length > page.limit;
      return { documents: documents.slice(0, page.limit), next_cursor: more ? documents[page.limit - 1].id : null };
    });
  }

  async removeDocument(account: string, id: string, doc: string): Promise<void> {
    const removed = await this.withDocuments(account, id, (store) => store.remove(doc));
    if (!removed) throw new NotFoundError('document not found');
  }

  /** A run request's datastores and queries, bound against the account's registrations: each problem a 422 naming its path. */
  async checkRun(
    account: string,
    req: { datastores?: RequestedDatastore[]; queries?: RequestedQuery[] },
    reserved: readonly string[],
  ): Promise<void> {
    if (!req.datastores?.length && !req.queries?.length) return;
    const { issues } = bindDatastores(await this.records(account), req, reserved);
    if (issues.length) throw UnprocessableRequestError.of(issues);
  }

  private async record(account: string, id: string): Promise<DatastoreRecord> {
    const found = (await this.records(account)).find((r) => r.id === id);
    if (!found) throw new NotFoundError('datastore not found');
    return found;
  }

  private async withDocuments<T>(account: string, id: string, fn: (store: DocumentStore) => T): Promise<T> {
    const record = await this.record(account, id);
    if (record.type !== 'documents')
      throw UnprocessableRequestError.at(
        'path.id',
        `datastore ${id} is a ${record.type} datastore: only documents datastores hold documents`,
        'not_documents',
      );
    const store = DocumentStore.open(documentsFile(this.dir, id));
    try {
      return fn(store);
    } finally {
      store.close();
    }
  }

  /** Keeps the record in the account's registry workflow (started on the account's first registration). */
  private async keep(account: string, record: DatastoreRecord, undo?: () => void): Promise<DatastoreView> {
    const start = new WithStartWorkflowOperation('accountDatastores', {
      workflowId: datastoresWorkflowId(account),
      taskQueue: this.config.TEMPORAL_TASK_QUEUE,
      args: [{ account, records: [] } satisfies DatastoresState],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    try {
      await this.call(() =>
        this.client.workflow.executeUpdateWithStart(registerDatastoreUpdate, {
          args: [record],
          startWorkflowOperation: start,
        }),
      );
    } catch (err) {
      undo?.();
      const cause = (err as { cause?: unknown }).cause;
      if ((err as Error).name === 'WorkflowUpdateFailedError' && cause instanceof ApplicationFailure) {
        throw cause.type === NAME_TAKEN
          ? new ConflictError(cause.message)
          : UnprocessableRequestError.at('body', cause.message, cause.type === TOO_MANY ? 'too_many' : 'refused');
      }
      throw err;
    }
    return this.view(record);
  }

  /** Opens the source and asks it one question; its refusal is a 422 carrying the database's own words. */
  private async check(
    type: 'postgres' | 'sqlite',
    conn: ConnectionDetails,
    uploaded: boolean,
    path: string,
  ): Promise<void> {
    let source;
    try {
      source = openSql(type, conn, uploaded, { policy: this.policy, sqliteRoot: this.config.DATASTORE_SQLITE_ROOT });
      await source.check();
    } catch (err) {
      if (err instanceof DatastoreConnectionError || err instanceof DatastoreQueryError) {
        throw UnprocessableRequestError.at(path, `the datastore could not be opened: ${err.message}`, 'unreachable');
      }
      throw err;
    } finally {
      await source?.close().catch(() => undefined);
    }
  }

  private underRoot(file: string): string {
    try {
      return fileUnderRoot(this.config.DATASTORE_SQLITE_ROOT, file);
    } catch (err) {
      if (err instanceof DatastoreConnectionError)
        throw UnprocessableRequestError.at('body.path', err.message, 'not_allowed');
      throw err;
    }
  }

  private view(r: DatastoreRecord): DatastoreView {
    const documents = r.type === 'documents' ? this.documentCount(r.id) : undefined;
    const limits = queryLimits(r, {
      timeoutMs: this.config.DATASTORE_QUERY_TIMEOUT_MS,
      maxRows: this.config.DATASTORE_MAX_ROWS,
    });
    return {
      id: r.id,
      name: r.name,
      type: r.type,
      description: r.description ?? null,
      allow_sql: r.allow_sql,
      query_timeout_ms: limits.timeoutMs,
      max_rows: limits.maxRows,
      created_at: r.created_at,
      ...(r.uploaded && { uploaded: true }),
      ...(documents !== undefined && { documents }),
    };
  }

  private documentCount(id: string): number {
    const file = documentsFile(this.dir, id);
    if (!fs.existsSync(file)) return 0;
    const store = DocumentStore.open(file, { readonly: true });
    try {
      return store.count();
    } finally {
      store.close();
    }
  }

  private ensureDir(): string {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return this.dir;
  }

  /** A Temporal call with a deadline; a missing workflow is a 404, an unreachable Temporal a 503 (temporalCall). */
  private call<T>(fn: () => Promise<T>, notFound = 'datastore not found'): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + DEADLINE_MS, fn), notFound);
  }
}

function newId(): string {
  return `ds_${randomBytes(16).toString('hex')}`;
}

function limitsOf(b: { description?: string; query_timeout_ms?: number; max_rows?: number }) {
  return {
    ...(b.description && { description: b.description }),
    ...(b.query_timeout_ms !== undefined && { query_timeout_ms: b.query_timeout_ms }),
    ...(b.max_rows !== undefined && { max_rows: b.max_rows }),
  };
}
