// agent datastore add <name> --postgres URL | --sqlite-path PATH | --upload FILE
// | --documents: registers a datastore and prints its id. agent datastore <id>:
// one datastore (never its connection details), or --delete it.
import fs from 'node:fs';
import type { Datastore, RegisterDatastoreBody } from '../../types';
import { stringOption, UsageError, type Command, type Context, type Values } from '../args';
import { when } from '../format';
import { allowSqlText } from './datastores';

const SOURCES = ['postgres', 'sqlite-path', 'upload', 'documents'] as const;
const ADD_ONLY = ['allow-sql', 'description'] as const;

/** A file's bytes, or an error naming the file and why (exit 1, as a failed request). */
export function readInput(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message.replace(/, \w+ '.*'$/, '')}`);
  }
}

/**
 * A connection URL never goes back to the terminal: should an error quote it
 * (the service scrubs its own messages; a proxy might not), the URL and its
 * password become ***.
 */
function withoutSecret(err: unknown, url: string): unknown {
  if (!(err instanceof Error)) return err;
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // Not a URL the WHATWG parser takes: the whole text is still hidden.
  }
  for (const secret of [url, password]) if (secret.length >= 3) err.message = err.message.split(secret).join('***');
  return err;
}

async function add(ctx: Context, values: Values, name: string): Promise<number> {
  const given = SOURCES.filter((s) => values[s] !== undefined);
  if (given.length !== 1) {
    const all = '--postgres URL, --sqlite-path PATH, --upload FILE, --documents';
    throw new UsageError(
      given.length ? `give one of ${all}; got ${given.map((s) => `--${s}`).join(' and ')}` : `give one of ${all}`,
    );
  }
  const source = given[0];
  const allowSql = !!values['allow-sql'];
  if (allowSql && source === 'documents')
    throw new UsageError('--allow-sql goes with --postgres, --sqlite-path or --upload');
  const description = stringOption(values, 'description');
  const common = { name, ...(description !== undefined && { description }) };
  const datastores = ctx.client().datastores;
  let d: Datastore;
  if (source === 'upload') {
    d = await datastores.upload(readInput(stringOption(values, 'upload')!), { ...common, allow_sql: allowSql });
  } else {
    const url = stringOption(values, 'postgres');
    const body: RegisterDatastoreBody =
      source === 'postgres'
        ? { type: 'postgres', connection_url: url!, allow_sql: allowSql, ...common }
        : source === 'sqlite-path'
          ? { type: 'sqlite', path: stringOption(values, 'sqlite-path')!, allow_sql: allowSql, ...common }
          : { type: 'documents', ...common };
    d = await datastores
      .register(body)
      .catch((err: unknown) => Promise.reject(url === undefined ? err : withoutSecret(err, url)));
  }
  if (values.json) {
    ctx.out.line(JSON.stringify(d));
    return 0;
  }
  // The id alone on stdout (for scripts); how to use it on stderr.
  ctx.out.line(d.id);
  ctx.out.errLine(
    d.type === 'documents'
      ? `add documents: agent documents ${d.id} --add FILE; in a run: agent run --datastore ${d.id}:${d.name} "..."`
      : `in a run: agent run --datastore ${d.id}:${d.name} "..."`,
  );
  return 0;
}

function show(ctx: Context, d: Datastore): void {
  const { out } = ctx;
  const rows: [string, string][] = [
    ['datastore', d.id],
    ['name', d.name],
    ['type', d.uploaded ? `${d.type} (uploaded)` : d.type],
    ['description', d.description ?? '-'],
  ];
  if (d.type === 'documents') rows.push(['documents', String(d.documents ?? 0)]);
  else
    rows.push(
      ['allow sql', allowSqlText(out, d)],
      ['timeout', `${d.query_timeout_ms} ms`],
      ['max rows', String(d.max_rows)],
    );
  rows.push(['created', when(d.created_at)]);
  for (const [k, v] of rows) out.line(`${out.paint('bold', k.padEnd(11))} ${v}`);
  if (d.type === 'documents') out.errLine(`its documents: agent documents ${d.id}`);
}

export const datastoreCommand: Command = {
  name: 'datastore',
  summary: 'Register a datastore (add), show one, or delete it.',
  usage:
    'agent datastore add <name> (--postgres URL | --sqlite-path PATH | --upload FILE | --documents) [--allow-sql] [--description TEXT] [--json] | agent datastore <id> [--delete] [--json]',
  help: [
    'add <name>    register a datastore named <name> (1-48 letters, digits, _ or -); prints its id',
    '--postgres URL',
    '              a PostgreSQL database: postgres://user:password@host:5432/db (kept sealed, never shown)',
    '--sqlite-path PATH',
    "              a SQLite file inside the service's DATASTORE_SQLITE_ROOT",
    '--upload FILE a SQLite file of yours: the service keeps a copy',
    '--documents   a knowledge base the service keeps (agent documents <id> --add FILE)',
    '--allow-sql   SQL datastores: the agent may also run its own read-only SELECT (query_<name>)',
    '--description TEXT',
    '              what the data is (the agent reads it)',
    "--delete      with <id>: delete the datastore (and the service's copy of its files)",
    "--json        print the datastore (or the action's answer) as JSON",
    'with <id> alone: the datastore (never its connection details)',
  ],
  options: {
    postgres: { type: 'string' },
    'sqlite-path': { type: 'string' },
    upload: { type: 'string' },
    documents: { type: 'boolean' },
    'allow-sql': { type: 'boolean' },
    description: { type: 'string' },
    delete: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: { min: 1, max: 2 },
  async run(ctx, values, [first, second]) {
    if (first === 'add') {
      if (second === undefined) throw new UsageError('missing argument: the name of the datastore');
      if (values.delete) throw new UsageError('--delete goes with a datastore id, not add');
      return add(ctx, values, second);
    }
    if (second !== undefined) throw new UsageError(`unexpected argument: ${second}`);
    const misplaced = [...SOURCES, ...ADD_ONLY].find((o) => values[o] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} goes with add`);
    const datastores = ctx.client().datastores;
    const json = !!values.json;
    if (values.delete) {
      await datastores.delete(first);
      ctx.out.line(json ? JSON.stringify({ id: first, deleted: true }) : `deleted: ${first}`);
      return 0;
    }
    const d = await datastores.get(first);
    if (json) ctx.out.line(JSON.stringify(d));
    else show(ctx, d);
    return 0;
  },
};
