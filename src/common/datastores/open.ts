// Opens a registered SQL datastore from its (unsealed) connection details: the
// one place that decides which driver reads it and under which rules, used by
// the gateway to check a registration and by the worker to run the tools.
import type { OutboundPolicy } from '../outbound/policy';
import { fileUnderRoot } from './files';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';
import type { SqlDatastore } from './types';

export type ConnectionDetails = { connection_url: string } | { path: string };

export interface OpenOptions {
  policy: OutboundPolicy;
  /** DATASTORE_SQLITE_ROOT: files registered by path must be inside it. */
  sqliteRoot?: string;
}

export function openSql(
  type: 'postgres' | 'sqlite',
  conn: ConnectionDetails,
  uploaded: boolean,
  opts: OpenOptions,
): SqlDatastore {
  if (type === 'postgres' && 'connection_url' in conn)
    return openPostgres(conn.connection_url, { policy: opts.policy });
  if (type === 'sqlite' && 'path' in conn)
    return openSqlite(uploaded ? conn.path : fileUnderRoot(opts.sqliteRoot, conn.path));
  throw new TypeError(`a ${type} datastore's connection details do not fit its type`);
}
