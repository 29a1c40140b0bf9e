// What Temporal holds of the service's data, read around the payload codec:
// a run's history as the server returns it, and the engine's files on disk.
// For "no secret in plain text" checks: both render bytes as UTF-8 text, so
// an unencrypted value shows up verbatim (base64 would hide it from a search).
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Bytes anywhere in the object as UTF-8 text, so a plain-text value in any payload is searchable. */
function bytesAsText(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  if (Array.isArray(value)) return value.map(bytesAsText);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bytesAsText(v)]));
  return value;
}

/**
 * Every event of the workflow's latest run (or of `runId`), fetched with the
 * bare gRPC service: no data converter, no codec, exactly what the server
 * stores and serves to any client. JSON, with payload bytes as UTF-8 text.
 */
export async function rawHistory(
  address: string,
  workflowId: string,
  opts: { namespace?: string; runId?: string } = {},
): Promise<string> {
  const connection = await Connection.connect({ address });
  try {
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await connection.workflowService.getWorkflowExecutionHistory({
        namespace: opts.namespace ?? 'default',
        execution: { workflowId, runId: opts.runId },
        nextPageToken,
      });
      events.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    const history = temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.create({ events }), {
      longs: String,
      enums: String,
    });
    return JSON.stringify(bytesAsText(history));
  } finally {
    await connection.close();
  }
}

/** The engine's files in a data folder: the embedded engine's log and archive (temporal.db*), the real dev server's SQLite files (temporal-cli.sqlite*). */
export function engineDataFiles(dataDir: string): string[] {
  return fs
    .readdirSync(dataDir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.startsWith('temporal'))
    .map((e) => path.join(dataDir, e.name));
}

/**
 * The engine's files under `dataDir`, each decoded as UTF-8 text (the engines
 * store payloads uncompressed, so a plain-text value appears verbatim), by
 * file name. Read while the engine runs, they hold what it has written so far.
 */
export function readEngineData(dataDir: string): Record<string, string> {
  const files = engineDataFiles(dataDir);
  if (!files.length) throw new Error(`no engine data files (temporal*) in ${dataDir}`);
  // A file can go between the listing and the read: the real server's SQLite journal lives only while it writes.
  return Object.fromEntries(files.map((f) => [path.basename(f), readIfThere(f)]));
}

/** The file's text; empty when it went before it could be read. */
function readIfThere(file: string): string {
  try {
    return fs.readFileSync(file).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}
