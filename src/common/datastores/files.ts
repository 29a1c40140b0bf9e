// Where the service keeps datastore files (DATASTORE_DIR): the copy of an
// uploaded SQLite database and each documents datastore's knowledge base, named
// by the datastore's id. And the one check for a SQLite file registered by path:
// it must resolve (links followed) inside DATASTORE_SQLITE_ROOT.
import fs from 'node:fs';
import path from 'node:path';
import { DatastoreConnectionError } from './types';

export function uploadFile(dir: string, id: string): string {
  return path.join(dir, `${id}.sqlite`);
}

export function documentsFile(dir: string, id: string): string {
  return path.join(dir, `${id}.documents.sqlite`);
}

/** The real path of `file`, or a DatastoreConnectionError (not retryable) saying why it may not be read. */
export function fileUnderRoot(root: string | undefined, file: string): string {
  if (!root)
    throw new DatastoreConnectionError(
      'SQLite files are registered by path only when the service names a folder for them (DATASTORE_SQLITE_ROOT); upload the file instead',
      false,
    );
  let real: string;
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
    real = fs.realpathSync(path.resolve(realRoot, file));
  } catch (err) {
    throw new DatastoreConnectionError(
      `no readable file at ${JSON.stringify(file)} under the service's SQLite folder (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      false,
    );
  }
  const rel = path.relative(realRoot, real);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new DatastoreConnectionError(
      `${JSON.stringify(file)} is outside the service's SQLite folder (DATASTORE_SQLITE_ROOT): only files inside it may be registered`,
      false,
    );
  }
  return real;
}
