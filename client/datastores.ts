// client.datastores: the account's data sources (a PostgreSQL URL, a SQLite
// file by path or upload, a documents knowledge base) that a run request's
// `datastores` names, and the documents of a knowledge base. The service never
// answers connection details; neither does this.
import type { HttpCore, RequestOptions } from './http';
import type {
  AddedDocuments,
  AddTextOptions,
  Datastore,
  DatastoreList,
  DocumentInfo,
  DocumentInput,
  DocumentList,
  ListDocumentsQuery,
  RegisterDatastoreBody,
  UploadDatastoreOptions,
} from './types';
import { eachItem } from './paging';

const datastorePath = (id: string, rest = '') => `/datastores/${encodeURIComponent(id)}${rest}`;

export class Datastores {
  constructor(private readonly core: HttpCore) {}

  /**
   * Registers a source; the service opens it and asks it one question first, so
   * one it cannot open is an UnprocessableEntityError with the database's own words. A
   * name the account already has is a ConflictError.
   */
  register(body: RegisterDatastoreBody, opts: RequestOptions = {}): Promise<Datastore> {
    return this.core.json('POST', '/datastores', { ...opts, body });
  }

  /** Uploads a SQLite database file; the service keeps a copy (deleted with the registration). */
  upload(file: Uint8Array, fields: UploadDatastoreOptions, opts: RequestOptions = {}): Promise<Datastore> {
    const { name, description, allow_sql, query_timeout_ms, max_rows } = fields;
    const form = formOf(
      { name, description, allow_sql, query_timeout_ms, max_rows },
      new Blob([file as Uint8Array<ArrayBuffer>], { type: 'application/vnd.sqlite3' }),
      `${name}.db`,
    );
    return this.core.json('POST', '/datastores', { ...opts, form });
  }

  /** Every datastore of the account, oldest first. */
  list(opts: RequestOptions = {}): Promise<DatastoreList> {
    return this.core.json('GET', '/datastores', opts);
  }

  /** One datastore (a NotFoundError for another account's; its connection details never). */
  get(id: string, opts: RequestOptions = {}): Promise<Datastore> {
    return this.core.json('GET', datastorePath(id), opts);
  }

  /** Deletes the registration (and the service's copy of an upload or a knowledge base). */
  async delete(id: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', datastorePath(id), opts);
  }

  /** Adds one document or several (at most 100 a call) to a documents datastore; an existing id is replaced. */
  addDocuments(id: string, docs: DocumentInput | DocumentInput[], opts: RequestOptions = {}): Promise<AddedDocuments> {
    return this.core.json('POST', datastorePath(id, '/documents'), {
      ...opts,
      body: Array.isArray(docs) ? { documents: docs } : docs,
    });
  }

  /** Adds one document sent as a file: its text, as markdown with `markdown`. */
  addText(id: string, text: string, fields: AddTextOptions = {}, opts: RequestOptions = {}): Promise<AddedDocuments> {
    const type = `${fields.markdown ? 'text/markdown' : 'text/plain'}; charset=utf-8`;
    const form = formOf(
      { id: fields.id, title: fields.title, format: fields.markdown ? 'markdown' : 'text' },
      new Blob([text], { type }),
      'document',
    );
    return this.core.json('POST', datastorePath(id, '/documents'), { ...opts, form });
  }

  /** One page of a knowledge base's documents, by id; pass `next_cursor` back as `cursor`. */
  listDocuments(id: string, query: ListDocumentsQuery = {}, opts: RequestOptions = {}): Promise<DocumentList> {
    return this.core.json('GET', datastorePath(id, '/documents'), { ...opts, query: { ...query } });
  }

  /** Every document of a knowledge base, fetching pages as the iteration goes. */
  listAllDocuments(
    id: string,
    query: Omit<ListDocumentsQuery, 'cursor'> = {},
    opts: RequestOptions = {},
  ): AsyncGenerator<DocumentInfo> {
    return eachItem(async (cursor) => {
      const page = await this.listDocuments(id, { ...query, cursor }, opts);
      return { items: page.documents, next_cursor: page.next_cursor };
    });
  }

  /** Removes one document (the agent no longer finds it); a NotFoundError if there is none of that id. */
  async removeDocument(id: string, doc: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', datastorePath(id, `/documents/${encodeURIComponent(doc)}`), opts);
  }
}

/** A multipart/form-data body: the fields that are set, and `file` as the part named file. */
function formOf(fields: Record<string, string | number | boolean | undefined>, file: Blob, filename: string): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, String(v));
  form.append('file', file, filename);
  return form;
}
