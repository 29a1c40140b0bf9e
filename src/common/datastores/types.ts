// The contract of the datastore layer: what the gateway (registration,
// documents) and the activities (the agent's tools) ask of a data source, and
// the errors they tell apart. Drivers live beside it (postgres.ts, sqlite.ts,
// documents.ts); nothing here does I/O.

export type DatastoreType = 'postgres' | 'sqlite' | 'documents';

/** Which positional marker a query text uses: `$1, $2...` (PostgreSQL) or `?` (SQLite). */
export type SqlDialect = 'postgres' | 'sqlite';

export interface QueryLimits {
  /** The statement's time limit, ms: past it the database cancels it. */
  timeoutMs: number;
  /** Rows kept; one more is read to know whether the result was cut. */
  maxRows: number;
}

export interface QueryResult {
  columns: string[];
  /** JSON-safe values: bigints and numerics as strings, dates as ISO strings, bytes as `<N bytes>`. */
  rows: unknown[][];
  /** The query had more rows than maxRows (only maxRows are in `rows`). */
  truncated: boolean;
  /** The bare query: from sending it to the last row read, ms (what the bench compares a tool call with). */
  elapsedMs: number;
}

export interface ColumnDescription {
  name: string;
  type: string;
  nullable: boolean;
}

export interface TableDescription {
  /** Schema-qualified for PostgreSQL outside `public` (`sales.orders`), bare otherwise. */
  name: string;
  columns: ColumnDescription[];
}

/** A SQL data source opened read-only. Every call may be made concurrently. */
export interface SqlDatastore {
  readonly dialect: SqlDialect;
  /** Proves the source answers (registration): throws DatastoreConnectionError or DatastoreQueryError with the database's own message. */
  check(): Promise<void>;
  describe(): Promise<TableDescription[]>;
  /**
   * One statement, its parameters bound by the driver, in a read-only transaction under `limits`.
   * `signal` stops it on the database (a cancelled task): the call then rejects with kind `cancelled`.
   */
  query(sql: string, params: readonly unknown[], limits: QueryLimits, signal?: AbortSignal): Promise<QueryResult>;
  close(): Promise<void>;
}

/**
 * Why a query gave no result, for the model to read and act on: `refused` (a
 * write, more than one statement, not a read), `timeout`, `invalid` (syntax,
 * unknown table or column, wrong parameter count), `database` (anything else
 * the database said) or `cancelled` (its caller's signal stopped it). Never
 * retried: the same call would fail the same way.
 */
export class DatastoreQueryError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'timeout' | 'invalid' | 'database' | 'cancelled',
  ) {
    super(message);
    this.name = 'DatastoreQueryError';
  }
}

/**
 * The source could not be reached or refused the connection. `retryable`:
 * refused, reset, unreachable, the server shutting down (Temporal retries the
 * call); not: bad credentials, unknown database, a missing file. The message
 * never holds the connection URL or its password.
 */
export class DatastoreConnectionError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'DatastoreConnectionError';
  }
}

export const cancelledQuery = () => new DatastoreQueryError('the query was cancelled', 'cancelled');

export interface DocumentInput {
  /** Absent: one is made (`doc_` and 24 hex). Adding an existing id replaces that document. */
  id?: string;
  title?: string;
  content: string;
  format?: 'text' | 'markdown' | 'json';
}

export interface DocumentInfo {
  id: string;
  title: string;
  format: 'text' | 'markdown' | 'json';
  chars: number;
  created_at: string;
}

export interface SearchHit {
  id: string;
  title: string;
  /** The matching passage, matches wrapped in [ and ]. */
  snippet: string;
  /** Higher is better (negated bm25). */
  score: number;
}
