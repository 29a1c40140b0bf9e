// agent files upload|list|download|delete: the files of a session's workspace (the agent's
// computer), to and from this machine. Paths in the workspace are relative to it, folders
// separated by `/`; a download's `-` writes the bytes to stdout.
import fs from 'node:fs';
import path from 'node:path';
import { stringOption, UsageError, type Command, type Context, type Values } from '../args';
import { table, when } from '../format';
import { readInput } from './datastore';

const ACTIONS = ['upload', 'list', 'download', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

/** How many arguments each action takes after its name: [min, max]. */
const ARGUMENTS: Record<Action, [number, number, string]> = {
  upload: [2, 3, 'agent files upload <session> <local-file> [remote-path]'],
  list: [1, 1, 'agent files list <session> [--prefix P]'],
  download: [2, 3, 'agent files download <session> <remote-path> [local-file|-]'],
  delete: [2, 2, 'agent files delete <session> <remote-path>'],
};

function checkArguments(action: string, args: string[], values: Values): Action {
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`unknown files action: ${action} (${ACTIONS.join(', ')})`);
  const [min, max, usage] = ARGUMENTS[action as Action];
  if (args.length < min) throw new UsageError(`missing arguments: ${usage}`);
  if (args.length > max) throw new UsageError(`unexpected argument: ${args[max]}`);
  if (values.prefix !== undefined && action !== 'list') throw new UsageError('--prefix goes with list');
  return action as Action;
}

async function list(ctx: Context, session: string, values: Values): Promise<number> {
  const prefix = stringOption(values, 'prefix');
  const page = await ctx.client().sessions.files.list(session, prefix === undefined ? {} : { prefix });
  if (values.json) {
    ctx.out.line(JSON.stringify(page));
    return 0;
  }
  if (!page.files.length) {
    ctx.out.errLine('no files');
    return 0;
  }
  const rows = page.files.map((f) => [String(f.size), when(f.modified_at), f.path]);
  ctx.out.line(table(['SIZE', 'MODIFIED (UTC)', 'PATH'], rows, ctx.out.columns));
  return 0;
}

async function download(ctx: Context, session: string, remote: string, local: string | undefined): Promise<number> {
  const data = await ctx.client().sessions.files.download(session, remote);
  if (local === '-') {
    ctx.out.bytes(data);
    return 0;
  }
  const target = local ?? path.basename(remote);
  try {
    fs.writeFileSync(target, data);
  } catch (err) {
    throw new Error(`cannot write ${target}: ${(err as Error).message.replace(/, \w+ '.*'$/, '')}`);
  }
  ctx.out.line(`saved: ${target} (${data.length} bytes)`);
  return 0;
}

export const filesCommand: Command = {
  name: 'files',
  summary: "Upload, list, download or delete the files of a session's workspace.",
  usage:
    'agent files upload <session> <local-file> [remote-path] | agent files list <session> [--prefix P] | agent files download <session> <remote-path> [local-file|-] | agent files delete <session> <remote-path>',
  help: [
    'upload <session> <local-file> [remote-path]',
    "              write the file into the session's workspace (default path: its name; an existing file is replaced)",
    'list <session> [--prefix P]',
    '              the files, sorted by path (--prefix: only paths that start with P, e.g. src/)',
    'download <session> <remote-path> [local-file|-]',
    '              save the file here (default: its name, in this folder; replaced if there), or print it with -',
    'delete <session> <remote-path>',
    '              delete the file from the workspace',
    '--json        print the answer (the file, the listing) as JSON',
  ],
  options: { prefix: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 4 },
  async run(ctx, values, [given, session, ...args]) {
    const action = checkArguments(given, session === undefined ? [] : [session, ...args], values);
    const files = () => ctx.client().sessions.files;
    const json = !!values.json;
    if (action === 'list') return list(ctx, session, values);
    if (action === 'download') return download(ctx, session, args[0], args[1]);
    if (action === 'delete') {
      await files().delete(session, args[0]);
      ctx.out.line(json ? JSON.stringify({ session, path: args[0], deleted: true }) : `deleted: ${args[0]}`);
      return 0;
    }
    const [local, remote = path.basename(local)] = args;
    const file = await files().upload(session, remote, readInput(local));
    ctx.out.line(json ? JSON.stringify(file) : `uploaded: ${file.path} (${file.size} bytes)`);
    return 0;
  },
};
