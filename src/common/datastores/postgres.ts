// PostgreSQL as a datastore the agent reads. Safety does not rest on parsing
// the model's SQL: every statement runs in a READ ONLY transaction that is
// always rolled back, under a server-side statement_timeout, bound through the
// extended protocol (which also refuses more than one statement), and read
// through a cursor so a huge result never crosses the wire. The host is checked
// by the outbound policy once, and the pool connects to the address it approved
// (DNS rebinding). Messages never carry the URL or its password.
import { isIP } from 'node:net';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { OutboundLookupError, OutboundRefusedError, type OutboundPolicy } from '../outbound/policy';
import { jsonSafe, TYPES } from './postgres-values';
import {
  cancelledQuery,
  DatastoreConnectionError,
  DatastoreQueryError,
  type QueryLimits,
  type QueryResult,
  type SqlDatastore,
  type TableDescription,
} from './types';

export interface PostgresOptions {
  policy?: OutboundPolicy;
  maxConnections?: number;
  connectTimeoutMs?: number;
}

type SslMode = 'disable' | 'allow' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';
const SSL_MODES: readonly SslMode[] = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

interface Target {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  sslmode: SslMode;
  /** Names the connection in messages: no credentials. */
  subject: string;
}

const DESCRIBE_LIMITS: QueryLimits = { timeoutMs: 5000, maxRows: 50_000 };
/** Past the statement's own limit, how long a silent server (a dead network) may hold a call before the client gives up on it. */
const DEADLINE_GRACE_MS = 5000;
const IDLE_IN_TRANSACTION_GRACE_MS = 10_000;

export function openPostgres(connectionUrl: string, opts: PostgresOptions): SqlDatastore {
  return new PostgresDatastore(parseTarget(connectionUrl), opts, (m) => scrubSecrets(m, connectionUrl));
}

// ---- the connection URL ----

function invalidUrl(why: string): DatastoreConnectionError {
  return new DatastoreConnectionError(
    `the PostgreSQL connection URL ${why} (expected postgres://user:password@host:5432/database)`,
    false,
  );
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalidUrl('has a malformed %-escape');
  }
}

function parseTarget(connectionUrl: string): Target {
  let url: URL;
  try {
    url = new URL(connectionUrl);
  } catch {
    throw invalidUrl('is not a valid URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw invalidUrl('must start with postgres:// or postgresql://');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A Unix socket (no host, or ?host=/path) would reach the service's own machine, past the outbound policy.
  if (!host || url.searchParams.has('host'))
    throw invalidUrl('must name a network host (Unix sockets are not supported)');
  const user = decode(url.username);
  if (!user) throw invalidUrl('must name a user');
  const sslmode = (url.searchParams.get('sslmode') ?? 'prefer') as SslMode;
  if (!SSL_MODES.includes(sslmode)) throw invalidUrl(`has an unknown sslmode (use one of ${SSL_MODES.join(', ')})`);
  const port = url.port ? Number(url.port) : 5432;
  const database = decode(url.pathname.slice(1)) || user; // libpq's default
  return {
    host,
    port,
    user,
    password: decode(url.password),
    database,
    sslmode,
    subject: `postgres://${url.hostname}:${port}/${encodeURIComponent(database)}`,
  };
}

/** The `ssl` option for `mode`: the certificate is checked against the host name even though the socket connects to the checked address. */
function tlsOptions(mode: SslMode, host: string): pg.PoolConfig['ssl'] {
  const servername = isIP(host) ? undefined : host;
  switch (mode) {
    case 'disable':
      return false;
    // Like libpq: allow, prefer and require encrypt without verifying the certificate, which stops
    // passive sniffing only. That is what these modes mean to psql users; verify-full is the one
    // that also stops an impostor, and the one to use across an untrusted network.
    case 'allow':
    case 'prefer':
    case 'require':
      return { servername, rejectUnauthorized: false };
    case 'verify-ca':
      return { servername, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { servername };
  }
}

// ---- messages ----

/** `message` without the connection URL or its password, nor any other `scheme://user:password@` it may quote. */
export function scrubSecrets(message: string, connectionUrl: string): string {
  const secrets = [connectionUrl];
  const password = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*?:([^/?#]*)@/i.exec(connectionUrl)?.[1];
  if (password) {
    secrets.push(password);
    try {
      secrets.push(decodeURIComponent(password));
    } catch {
      // a malformed escape: the raw form is scrubbed already
    }
  }
  let out = message;
  for (const s of secrets.filter(Boolean).sort((a, b) => b.length - a.length)) out = out.split(s).join('***');
  return out.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*):[^@\s/]*@/gi, '$1:***@');
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

const timeoutError = (timeoutMs: number) =>
  new DatastoreQueryError(`the query ran past its time limit of ${seconds(timeoutMs)} and was cancelled`, 'timeout');

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
/** The server is shutting down, starting, or full: worth another try later. */
const RETRYABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const TRANSIENT_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|connection timeout|not queryable/i;

interface DriverError {
  code?: unknown;
  message?: unknown;
}

function codeOf(err: unknown): string {
  const code = (err as DriverError | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

function messageOf(err: unknown): string {
  const message = (err as DriverError | undefined)?.message;
  return typeof message === 'string' ? message : String(err);
}

/** The connection broke (as opposed to the statement failing): the client must not go back to the pool. */
function isConnectionFailure(err: unknown): boolean {
  const code = codeOf(err);
  if (code === '08P01' && /bind message/.test(messageOf(err))) return false;
  return (
    code.startsWith('08') ||
    RETRYABLE_SQLSTATES.has(code) ||
    NETWORK_CODES.has(code) ||
    TRANSIENT_MESSAGE.test(messageOf(err))
  );
}

/** An error met while connecting (or from the policy): every one is a DatastoreConnectionError. */
function connectionError(err: unknown, subject: string): DatastoreConnectionError {
  if (err instanceof DatastoreConnectionError) return err;
  if (err instanceof OutboundRefusedError) return new DatastoreConnectionError(err.message, false);
  if (err instanceof OutboundLookupError) return new DatastoreConnectionError(err.message, true);
  // Anything else (bad credentials 28P01/28000, an unknown database 3D000, no CONNECT right, TLS
  // refused or a certificate that does not verify, a name that does not resolve) fails the same way next time.
  return new DatastoreConnectionError(`cannot connect to ${subject}: ${messageOf(err)}`, isConnectionFailure(err));
}

const CONNECT_SQLSTATES = new Set(['28P01', '28000', '3D000']);

/** An error met while running a statement, by SQLSTATE (see the contract's kinds). */
function statementError(
  err: unknown,
  timeoutMs: number,
  subject: string,
): DatastoreQueryError | DatastoreConnectionError {
  if (err instanceof DatastoreQueryError || err instanceof DatastoreConnectionError) return err;
  const code = codeOf(err);
  const message = messageOf(err);
  if (code === '57014') return timeoutError(timeoutMs);
  // 25006: a write in the read-only transaction; 25001: a command that cannot run in one (VACUUM, CREATE DATABASE...).
  if (code === '25006' || code === '25001')
    return new DatastoreQueryError(
      `datastores are read-only: only statements that read may run (the database said: ${message})`,
      'refused',
    );
  if (code === '42601' && /multiple commands/.test(message))
    return new DatastoreQueryError('send one statement at a time: a query may hold a single SQL statement', 'refused');
  if (CONNECT_SQLSTATES.has(code) || isConnectionFailure(err)) return connectionError(err, subject);
  if (code.startsWith('42') || code.startsWith('22') || code === '08P01')
    return new DatastoreQueryError(message, 'invalid');
  return new DatastoreQueryError(message, 'database');
}

/** Settles like `work`, or rejects with `late()` after `ms`. */
async function withDeadline<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  work.catch(() => undefined); // once late, its own failure has no one to tell
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function checkedLimits(limits: QueryLimits): QueryLimits {
  if (
    !(limits.timeoutMs > 0) ||
    !Number.isFinite(limits.timeoutMs) ||
    !(limits.maxRows >= 0) ||
    !Number.isFinite(limits.maxRows)
  ) {
    throw new RangeError(`query limits out of range: timeoutMs ${limits.timeoutMs}, maxRows ${limits.maxRows}`);
  }
  return { timeoutMs: Math.ceil(limits.timeoutMs), maxRows: Math.floor(limits.maxRows) };
}

/** A checked-out client and whether it may go back to the pool. */
interface Lease {
  client: pg.PoolClient;
  broken: boolean;
  onError: () => void;
}

// ---- the datastore ----

class PostgresDatastore implements SqlDatastore {
  readonly dialect = 'postgres' as const;
  private pool?: Promise<pg.Pool>;
  /** How the pool's clients connect (the address the policy approved): a canceller connects the same way. */
  private clientConfig?: pg.ClientConfig;
  private closed = false;

  constructor(
    private readonly target: Target,
    private readonly opts: PostgresOptions,
    private readonly scrub: (message: string) => string,
  ) {}

  async check(): Promise<void> {
    await this.query('SELECT 1', [], { timeoutMs: 5000, maxRows: 1 });
  }

  async describe(): Promise<TableDescription[]> {
    const { rows } = await this.query(DESCRIBE_SQL, [], DESCRIBE_LIMITS);
    const tables = new Map<string, TableDescription>();
    for (const [schema, table, column, type, nullable] of rows as [string, string, string, string, boolean][]) {
      const name = schema === 'public' ? table : `${schema}.${table}`;
      if (!tables.has(name)) tables.set(name, { name, columns: [] });
      tables.get(name)!.columns.push({ name: column, type, nullable });
    }
    return [...tables.values()];
  }

  async query(
    sql: string,
    params: readonly unknown[],
    limits: QueryLimits,
    signal?: AbortSignal,
  ): Promise<QueryResult> {
    const checked = checkedLimits(limits);
    if (signal?.aborted) throw cancelledQuery();
    try {
      const lease = await this.acquire();
      const stop = () => {
        lease.broken = true;
        void this.cancelBackend(lease.client);
      };
      signal?.addEventListener('abort', stop, { once: true });
      try {
        if (signal?.aborted) throw cancelledQuery(); // while waiting for a connection
        const work = this.transaction(lease, sql, params, checked);
        // The statement_timeout is the server's to enforce; this only catches a server gone silent.
        return await withDeadline(
          work,
          checked.timeoutMs + DEADLINE_GRACE_MS,
          () => ((lease.broken = true), timeoutError(checked.timeoutMs)),
        );
      } catch (err) {
        if (signal?.aborted) throw cancelledQuery();
        // A cancelled statement leaves the session usable, but a fresh connection is cheap and rules out a backend still busy.
        if (isConnectionFailure(err) || codeOf(err) === '57014') lease.broken = true;
        throw statementError(err, checked.timeoutMs, this.target.subject);
      } finally {
        signal?.removeEventListener('abort', stop);
        lease.client.removeListener('error', lease.onError);
        lease.client.release(lease.broken);
      }
    } catch (err) {
      throw this.scrubbed(err);
    }
  }

  /**
   * Asks the server to stop what `client`'s backend runs (pg_cancel_backend, from a connection
   * of its own: the pool may be full). Best effort: the statement_timeout still ends it.
   */
  private async cancelBackend(client: pg.PoolClient): Promise<void> {
    const pid = (client as unknown as { processID?: number }).processID;
    if (!pid || !this.clientConfig) return;
    const canceller = new pg.Client(this.clientConfig);
    canceller.on('error', () => undefined);
    try {
      await canceller.connect();
      await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
    } catch {
      // nothing to add: the statement ends at its time limit anyway
    } finally {
      await canceller.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = await this.pool?.catch(() => undefined);
    await pool?.end();
  }

  private async transaction(
    lease: Lease,
    sql: string,
    params: readonly unknown[],
    limits: QueryLimits,
  ): Promise<QueryResult> {
    const { client } = lease;
    await client.query('BEGIN TRANSACTION READ ONLY');
    let result: QueryResult;
    try {
      await client.query(`SET LOCAL statement_timeout = ${limits.timeoutMs}`);
      // Should this client vanish mid-transaction, the server still ends the session instead of holding its snapshot.
      await client.query(
        `SET LOCAL idle_in_transaction_session_timeout = ${limits.timeoutMs + IDLE_IN_TRANSACTION_GRACE_MS}`,
      );
      result = await readRows(client, sql, params, limits.maxRows);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (lease.broken = true));
      throw err;
    }
    await client.query('ROLLBACK'); // never COMMIT: nothing the statement did may last
    return result;
  }

  private async acquire(): Promise<Lease> {
    if (this.closed) throw new DatastoreConnectionError(`${this.target.subject} was closed`, false);
    try {
      const lease: Lease = {
        client: await (await this.openedPool()).connect(),
        broken: false,
        onError: () => (lease.broken = true),
      };
      // While checked out the client has no pool listener: an unheard 'error' would end the process.
      lease.client.on('error', lease.onError);
      return lease;
    } catch (err) {
      throw connectionError(err, this.target.subject);
    }
  }

  /** The pool, opened on first use; a failed open is not kept, so the next call tries again. */
  private openedPool(): Promise<pg.Pool> {
    this.pool ??= this.openPool().catch((err: unknown) => {
      this.pool = undefined;
      throw err;
    });
    return this.pool;
  }

  private async openPool(): Promise<pg.Pool> {
    const { host, subject, sslmode } = this.target;
    const address = this.opts.policy ? await this.opts.policy.checkHost(host, subject) : host;
    const pool = this.newPool(address, tlsOptions(sslmode, host));
    if (sslmode !== 'prefer' && sslmode !== 'allow') return pool;
    // libpq falls back to a plain connection when the server has no TLS; pg cannot, so the first connection finds out.
    try {
      (await pool.connect()).release();
      return pool;
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (!/does not support SSL/.test(messageOf(err))) throw err;
      return this.newPool(address, false);
    }
  }

  private newPool(address: string, ssl: pg.PoolConfig['ssl']): pg.Pool {
    const { port, user, password, database } = this.target;
    this.clientConfig = {
      host: address,
      port,
      user,
      password,
      database,
      ssl,
      connectionTimeoutMillis: this.opts.connectTimeoutMs ?? 5000,
      application_name: 'agent-execution-service',
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    };
    const pool = new pg.Pool({
      ...this.clientConfig,
      max: this.opts.maxConnections ?? 4,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    // An idle client whose server went away (a restart, a network cut) reports here; the pool drops
    // it and the next query opens a fresh one. Unheard, the event would crash the process.
    pool.on('error', () => undefined);
    return pool;
  }

  private scrubbed(err: unknown): unknown {
    if (err instanceof DatastoreQueryError) return new DatastoreQueryError(this.scrub(err.message), err.kind);
    if (err instanceof DatastoreConnectionError)
      return new DatastoreConnectionError(this.scrub(err.message), err.retryable);
    return err;
  }
}

/** Runs the statement through a cursor, reading at most maxRows + 1 rows from the server. */
async function readRows(
  client: pg.PoolClient,
  sql: string,
  params: readonly unknown[],
  maxRows: number,
): Promise<QueryResult> {
  const started = performance.now();
  const cursor = client.query(new Cursor(sql, [...params], { rowMode: 'array', types: TYPES }));
  const { rows, fields } = await new Promise<{ rows: unknown[][]; fields: pg.FieldDef[] }>((resolve, reject) => {
    cursor.read(maxRows + 1, (err, rows, result) =>
      err ? reject(err) : resolve({ rows: rows as unknown[][], fields: result?.fields ?? [] }),
    );
  });
  const elapsedMs = Math.round((performance.now() - started) * 100) / 100;
  await cursor.close();
  return {
    columns: fields.map((f) => f.name),
    rows: rows.slice(0, maxRows).map((row) => row.map(jsonSafe)),
    truncated: rows.length > maxRows,
    elapsedMs,
  };
}

const DESCRIBE_SQL = `
SELECT table_schema, table_name, column_name,
       CASE data_type WHEN 'ARRAY' THEN ltrim(udt_name, '_') || '[]' WHEN 'USER-DEFINED' THEN udt_name ELSE data_type END,
       is_nullable = 'YES'
  FROM information_schema.columns
 WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
 ORDER BY table_schema, table_name, ordinal_position`;
