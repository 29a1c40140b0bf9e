// The SQLite reader: the one place a registered SQLite file is opened, one
// per datastore, started by sqlite.ts. It runs as a child process, not a
// worker thread: better-sqlite3 runs a statement synchronously in native code
// and exposes no sqlite3_interrupt, and a worker thread's terminate() takes
// effect only when control comes back to JavaScript — a long aggregate never
// does, so a terminated thread would go on burning a core until the statement
// ended by itself. A process is stopped by SIGKILL at once.
//
// Calls come one at a time over IPC; the connection is opened on the first one
// (so a missing file is that call's error) and kept for the next.
import Database from 'better-sqlite3';
import type { ColumnDescription, QueryResult, TableDescription } from './types';

export type ReaderCall =
  { op: 'check' } | { op: 'describe' } | { op: 'query'; sql: string; params: unknown[]; maxRows: number };
export type ToReader = ReaderCall & { id: number };

export interface ReaderError {
  kind: 'refused' | 'invalid' | 'database' | 'connection';
  /** For `connection`: whether a later call may succeed. */
  retryable: boolean;
  message: string;
}

export type FromReader =
  | { type: 'ready' }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'failed'; id: number; error: ReaderError };

/** Waits this long for another process's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 1000;

class Refusal extends Error {}

let db: Database.Database | undefined;

function connection(file: string): Database.Database {
  if (db) return db;
  const opened = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  try {
    // Also blocks writes to TEMP tables, which a read-only file still allows.
    opened.pragma('query_only = ON');
  } catch (err) {
    opened.close();
    throw err;
  }
  db = opened;
  return db;
}

function check(conn: Database.Database): null {
  conn.prepare('SELECT count(*) FROM sqlite_master').get();
  return null;
}

function describe(conn: Database.Database): TableDescription[] {
  // table_list types FTS and R-tree internals `shadow`, which are left out with sqlite_ internals.
  const tables = conn
    .prepare(
      "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'view', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )
    .pluck()
    .all() as string[];
  const columns = conn.prepare('SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid');
  return tables.map((name) => ({ name, columns: columnsOf(columns, name) }));
}

function columnsOf(stmt: Database.Statement, table: string): ColumnDescription[] {
  try {
    const rows = stmt.all(table) as { name: string; type: string; notnull: number }[];
    return rows.map((c) => ({ name: c.name, type: c.type, nullable: c.notnull === 0 }));
  } catch {
    // A view over a table since dropped: still listed, its columns unknown.
    return [];
  }
}

function query(conn: Database.Database, sql: string, params: unknown[], maxRows: number): QueryResult {
  const started = performance.now();
  const stmt = prepare(conn, sql);
  if (!stmt.reader || !stmt.readonly)
    throw new Refusal(
      'only a read (SELECT or WITH) may run: this statement would change the database or the connection',
    );
  stmt.raw(true).safeIntegers(true);
  const rows: unknown[][] = [];
  let truncated = false;
  for (const row of stmt.iterate(...params.map(bindable)) as Iterable<unknown[]>) {
    if (rows.length === maxRows) {
      truncated = true;
      break;
    }
    rows.push(row.map(jsonSafe));
  }
  const elapsedMs = performance.now() - started;
  return { columns: stmt.columns().map((c) => c.name), rows, truncated, elapsedMs };
}

function prepare(conn: Database.Database, sql: string): Database.Statement {
  try {
    return conn.prepare(sql);
  } catch (err) {
    if (err instanceof RangeError && /more than one statement/.test(err.message))
      throw new Refusal('one statement at a time: the query holds more than one');
    throw err;
  }
}

/** IPC brings bytes back as a plain Uint8Array. */
function bindable(v: unknown): unknown {
  return v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;
}

function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= Number.MIN_SAFE_INTEGER && v <= Number.MAX_SAFE_INTEGER ? Number(v) : v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Uint8Array) return `<${v.byteLength} bytes>`;
  return v;
}

function toReaderError(err: unknown): ReaderError {
  const message = err instanceof Error ? err.message : String(err);
  const fail = (kind: ReaderError['kind'], retryable = false): ReaderError => ({ kind, retryable, message });
  if (err instanceof Refusal) return fail('refused');
  if (err instanceof Database.SqliteError) {
    const code = err.code;
    if (/^SQLITE_(CANTOPEN|NOTADB)/.test(code)) return fail('connection');
    if (code.startsWith('SQLITE_BUSY')) return fail('connection', true);
    if (/^SQLITE_(READONLY|AUTH|PERM)/.test(code)) return fail('refused');
    if (/^SQLITE_(ERROR|RANGE|MISMATCH)/.test(code)) return fail('invalid');
    return fail('database');
  }
  // better-sqlite3's own checks: wrong number of parameters, a value it cannot bind.
  if (err instanceof RangeError || err instanceof TypeError) return fail('invalid');
  return fail('database');
}

function run(file: string, msg: ToReader): unknown {
  const conn = connection(file);
  if (msg.op === 'check') return check(conn);
  if (msg.op === 'describe') return describe(conn);
  return query(conn, msg.sql, msg.params, msg.maxRows);
}

function main(): void {
  const file = process.argv[2];
  const send = (m: FromReader) => process.send?.(m);
  process.on('message', (msg: ToReader) => {
    try {
      send({ type: 'done', id: msg.id, result: run(file, msg) });
    } catch (err) {
      send({ type: 'failed', id: msg.id, error: toReaderError(err) });
    }
  });
  // The parent is gone (or let go of it): nothing will ask again.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

if (require.main === module) main();
