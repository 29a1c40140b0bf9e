// A knowledge base the service keeps itself: one SQLite file per documents
// datastore, the documents in a table and their words in an FTS5 index. The
// gateway writes (a connection per request), the worker searches (one
// long-lived read-only connection): WAL lets both at once from two processes.
//
// Synchronous on purpose: every call is one small indexed statement.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { DatastoreConnectionError, type DocumentInfo, type DocumentInput, type SearchHit } from './types';

type Format = DocumentInfo['format'];

const FORMATS: readonly Format[] = ['text', 'markdown', 'json'];
const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Waits this long for the other process's write lock. */
const BUSY_TIMEOUT_MS = 5000;
/** A search's words beyond this many are dropped: enough for any question, bounded for the index. */
const MAX_TERMS = 32;
/** Title matches count this many times a body match (bm25 column weights). */
const TITLE_WEIGHT = 5;
const SNIPPET_TOKENS = 12;

// The index has its own copy of the text (not external content): for JSON it
// holds the string values, not the document as stored, and snippets need it.
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    format TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');
`;

const INFO_COLUMNS = 'id, title, format, length(content) AS chars, created_at';

export class DocumentStore {
  private constructor(private readonly db: Database.Database) {}

  /** Opens (and, unless `readonly`, creates) the knowledge base in `file`. */
  static open(file: string, opts: { readonly?: boolean } = {}): DocumentStore {
    const readonly = opts.readonly ?? false;
    let db: Database.Database;
    try {
      db = new Database(file, { readonly, fileMustExist: readonly, timeout: BUSY_TIMEOUT_MS });
    } catch (err) {
      throw new DatastoreConnectionError(`the knowledge base cannot be opened: ${(err as Error).message}`, false);
    }
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      db.exec(SCHEMA);
    }
    return new DocumentStore(db);
  }

  add(doc: DocumentInput): DocumentInfo {
    const id = doc.id ?? `doc_${randomBytes(12).toString('hex')}`;
    if (typeof id !== 'string' || !ID_PATTERN.test(id))
      throw new TypeError(
        `document id ${JSON.stringify(String(id).slice(0, 140))} is not valid: 1 to 128 of A-Z a-z 0-9 _ . : -`,
      );
    const format = doc.format ?? 'text';
    if (!FORMATS.includes(format))
      throw new TypeError(`document format ${JSON.stringify(format)} is not one of ${FORMATS.join(', ')}`);
    if (typeof doc.content !== 'string') throw new TypeError('document content must be a string');
    const title = doc.title ?? '';
    const body = format === 'json' ? jsonText(doc.content) : doc.content;
    const created_at = new Date().toISOString();
    this.db.transaction(() => {
      this.removeRow(id);
      const { lastInsertRowid } = this.db
        .prepare('INSERT INTO documents (id, title, format, content, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(id, title, format, doc.content, created_at);
      this.db
        .prepare('INSERT INTO documents_fts (rowid, title, body) VALUES (?, ?, ?)')
        .run(lastInsertRowid, title, body);
    })();
    return this.get(id) as DocumentInfo;
  }

  remove(id: string): boolean {
    return this.db.transaction(() => this.removeRow(id))();
  }

  list(opts: { limit: number; after?: string }): DocumentInfo[] {
    const stmt = this.db.prepare(`SELECT ${INFO_COLUMNS} FROM documents WHERE id > ? ORDER BY id LIMIT ?`);
    return stmt.all(opts.after ?? '', Math.max(0, opts.limit)) as DocumentInfo[];
  }

  get(id: string): DocumentInfo | undefined {
    return this.db.prepare(`SELECT ${INFO_COLUMNS} FROM documents WHERE id = ?`).get(id) as DocumentInfo | undefined;
  }

  count(): number {
    return this.db.prepare('SELECT count(*) FROM documents').pluck().get() as number;
  }

  /** The documents matching any word of `text`, best first. Free text: never an FTS5 syntax error. */
  search(text: string, limit: number): SearchHit[] {
    const match = matchExpression(text);
    if (!match || limit < 1) return [];
    const rows = this.db
      .prepare(
        `SELECT d.id, d.title, snippet(documents_fts, -1, '[', ']', '…', ${SNIPPET_TOKENS}) AS snippet, bm25(documents_fts, ${TITLE_WEIGHT}, 1) AS rank
         FROM documents_fts JOIN documents d ON d.rowid = documents_fts.rowid
         WHERE documents_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(match, limit) as { id: string; title: string; snippet: string; rank: number }[];
    return rows.map(({ rank, ...hit }) => ({ ...hit, score: -rank }));
  }

  close(): void {
    this.db.close();
  }

  private removeRow(id: string): boolean {
    const row = this.db.prepare('SELECT rowid FROM documents WHERE id = ?').pluck().get(id) as
      number | bigint | undefined;
    if (row === undefined) return false;
    this.db.prepare('DELETE FROM documents_fts WHERE rowid = ?').run(row);
    this.db.prepare('DELETE FROM documents WHERE rowid = ?').run(row);
    return true;
  }
}

/**
 * The model's words as an FTS5 query: each word a quoted string (so `AND`,
 * `NEAR(`, `*`, `-` or `:` are only words), any of them matching.
 */
function matchExpression(text: string): string {
  const terms = text.split(/[^\p{L}\p{N}_]+/u).filter((t) => t !== '');
  return terms
    .slice(0, MAX_TERMS)
    .map((t) => `"${t.replace(/"/g, '""')}"`)
    .join(' OR ');
}

/** A JSON document's string values, one a line: what its readers search for, without the syntax. */
function jsonText(content: string): string {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw new TypeError('a json document must hold valid JSON');
  }
  const out: string[] = [];
  collectStrings(value, out);
  return out.join('\n');
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collectStrings(v, out);
}
