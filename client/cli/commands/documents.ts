// agent documents <datastore>: the documents of a knowledge base (a documents
// datastore) as a table, or --add a file to it (.md as markdown, .json as a
// JSON document, anything else as text), or --delete one.
import path from 'node:path';
import type { AddedDocuments } from '../../types';
import { intOption, stringOption, UsageError, type Command, type Context } from '../args';
import { table, when } from '../format';
import { readInput } from './datastore';

async function addFile(
  ctx: Context,
  datastore: string,
  file: string,
  id: string | undefined,
  title: string,
): Promise<AddedDocuments> {
  const text = readInput(file).toString('utf8');
  const datastores = ctx.client().datastores;
  const ext = path.extname(file).toLowerCase();
  if (ext === '.json') {
    try {
      JSON.parse(text);
    } catch (err) {
      throw new Error(`${file} is not JSON: ${(err as Error).message}`);
    }
    return datastores.addDocuments(datastore, {
      content: text,
      format: 'json',
      title,
      ...(id !== undefined && { id }),
    });
  }
  return datastores.addText(datastore, text, { id, title, markdown: ext === '.md' || ext === '.markdown' });
}

export const documentsCommand: Command = {
  name: 'documents',
  summary: "List a documents datastore's documents, or add a file to it, or delete one.",
  usage:
    'agent documents <datastore> [--add FILE [--title TEXT] [--id ID] | --delete DOC] [--limit N] [--cursor C] [--json]',
  help: [
    '--add FILE    add the file: .md as markdown, .json as a JSON document, anything else as text;',
    '              prints the document id (an existing id is replaced)',
    "--title TEXT  with --add: its title (default: the file's name)",
    '--id ID       with --add: its id (default: one the service makes)',
    '--delete DOC  delete document DOC (the agent no longer finds it)',
    '--limit N     documents per page, 1-100 (default 50)',
    '--cursor C    the page after the one that printed this cursor',
    "--json        print the page (or the action's answer) as JSON",
    'without --add or --delete: the documents, by id',
  ],
  options: {
    add: { type: 'string' },
    title: { type: 'string' },
    id: { type: 'string' },
    delete: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [datastore]) {
    const file = stringOption(values, 'add');
    const doc = stringOption(values, 'delete');
    const id = stringOption(values, 'id');
    const title = stringOption(values, 'title');
    if (file !== undefined && doc !== undefined) throw new UsageError('give at most one of --add, --delete');
    if (file === undefined && (id !== undefined || title !== undefined))
      throw new UsageError(`--${id !== undefined ? 'id' : 'title'} goes with --add`);
    if ((file !== undefined || doc !== undefined) && (values.limit !== undefined || values.cursor !== undefined))
      throw new UsageError(
        `--${values.limit !== undefined ? 'limit' : 'cursor'} goes with the listing, not --${file !== undefined ? 'add' : 'delete'}`,
      );
    const json = !!values.json;
    if (file !== undefined) {
      const added = await addFile(ctx, datastore, file, id, title ?? path.basename(file));
      ctx.out.line(json ? JSON.stringify(added) : added.documents[0].id);
      return 0;
    }
    if (doc !== undefined) {
      await ctx.client().datastores.removeDocument(datastore, doc);
      ctx.out.line(json ? JSON.stringify({ datastore, id: doc, deleted: true }) : `deleted: ${doc}`);
      return 0;
    }
    const limit = intOption(values, 'limit', 1, 100);
    const page = await ctx
      .client()
      .datastores.listDocuments(datastore, { limit, cursor: stringOption(values, 'cursor') });
    if (json) {
      ctx.out.line(JSON.stringify(page));
      return 0;
    }
    if (!page.documents.length) {
      ctx.out.errLine('no documents');
      return 0;
    }
    const rows = page.documents.map((d) => [d.id, d.format, String(d.chars), when(d.created_at), d.title || '-']);
    ctx.out.line(table(['DOCUMENT', 'FORMAT', 'CHARS', 'CREATED (UTC)', 'TITLE'], rows, ctx.out.columns));
    if (page.next_cursor)
      ctx.out.errLine(
        `more: agent documents ${datastore}${limit !== undefined ? ` --limit ${limit}` : ''} --cursor ${page.next_cursor}`,
      );
    return 0;
  },
};
