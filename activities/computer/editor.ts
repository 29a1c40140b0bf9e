// The `str_replace_editor` tool (workflows/tool-registry.ts): view, create, str_replace, insert
// and undo_edit on the session's workspace, with the semantics of the reference text editor tool
// of the same name (Anthropic's computer-use demo), from which it differs where that one loses
// data: tabs are never expanded in the file, an undo of a create deletes the file (the reference
// writes the created text again), a file's mode is kept, writes are atomic. As there, `create`
// refuses a path that exists (str_replace and insert edit a file; bash's rm makes room).
// Every path is pinned (src/common/workspaces/pinned.ts: no race with a command swapping a folder
// for a link); errors are ToolInputError, read by the model.
import fs from 'node:fs/promises';
import type { SessionWorkspace } from '../../src/common/workspaces/layout';
import { normaliseWorkspacePath } from '../../src/common/workspaces/paths';
import { ToolInputError } from '../tools/builtin';
import {
  checkQuota,
  fsError,
  oneAtATime,
  pinToolPath,
  readText,
  shown,
  statOrMissing,
  writeAtomic,
  type ToolPath,
  type WorkspaceQuota,
} from './editor-files';
import { HISTORY_DEPTH, newestHistory, pushHistory, type Before } from './editor-history';
import { showLines, splitLines, viewFile, viewFolder } from './editor-view';
export type { WorkspaceQuota } from './editor-files';

export interface EditorResult {
  /** What the model reads. */
  text: string;
  /** Workspace-relative paths written or deleted (for the run's "files changed" event). */
  changed: string[];
}

const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;
const ARGUMENTS = new Set(['command', 'path', 'file_text', 'old_str', 'new_str', 'insert_line', 'view_range']);
/** Lines shown around an edit, before and after it (as the reference tool). */
const SNIPPET_LINES = 4;

interface Target extends ToolPath {
  ws: SessionWorkspace;
  quota: WorkspaceQuota;
}

/** Runs one str_replace_editor call in the workspace `ws`, writes held to `quota`. */
export async function runEditor(
  given: Record<string, unknown>,
  ws: SessionWorkspace,
  quota: WorkspaceQuota,
): Promise<EditorResult> {
  // A null is an argument not given: models calling with strict schemas send null for those.
  const args = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null));
  const command = args.command;
  if (typeof command !== 'string' || !(COMMANDS as readonly string[]).includes(command))
    throw new ToolInputError(`Unknown command ${JSON.stringify(command)}: the commands are ${COMMANDS.join(', ')}.`);
  const unknown = Object.keys(args).filter((k) => !ARGUMENTS.has(k));
  if (unknown.length) throw new ToolInputError(`Unknown parameter(s): ${unknown.join(', ')}.`);
  if (typeof args.path !== 'string') throw new ToolInputError('The parameter `path` (a string) is required.');
  if (command === 'view')
    return { text: await withTarget(ws, quota, args.path, false, (t) => view(t, args.view_range)), changed: [] };
  // One edit of a file at a time (parallel tool calls of one round may name the same file).
  const key = `${ws.state}\0${normalisedForKey(args.path)}`;
  const makeParents = command === 'create' || command === 'undo_edit';
  const text = await oneAtATime(key, () =>
    withTarget(ws, quota, args.path as string, makeParents, (t) => {
      if (!t.rel) throw new ToolInputError(`${shown('')} is the workspace folder: only the view command works on it.`);
      return edit(command, t, args);
    }),
  );
  return { text, changed: [normalisedForKey(args.path)] };
}

/** The path the agent named, normalised (an invalid one is refused when it is pinned). */
function normalisedForKey(name: string): string {
  try {
    return normaliseWorkspacePath(name);
  } catch {
    return name;
  }
}

/** Runs `fn` on the pinned path, the folder it holds open closed after. */
async function withTarget<T>(
  ws: SessionWorkspace,
  quota: WorkspaceQuota,
  name: string,
  makeParents: boolean,
  fn: (t: Target) => Promise<T>,
): Promise<T> {
  const t: Target = { ...(await pinToolPath(ws.files, name, makeParents)), ws, quota };
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

async function view(t: Target, range: unknown): Promise<string> {
  const st = await statOrMissing(t);
  if (st?.isDirectory()) return viewFolder(t.abs, t.rel, range);
  return viewFile(t, range);
}

function edit(command: string, t: Target, args: Record<string, unknown>): Promise<string> {
  if (command === 'create') return create(t, stringArg(args, 'file_text', 'create'));
  if (command === 'str_replace') {
    const newStr = args.new_str === undefined ? '' : stringArg(args, 'new_str', 'str_replace');
    return strReplace(t, stringArg(args, 'old_str', 'str_replace'), newStr);
  }
  if (command === 'insert') {
    const line = args.insert_line;
    if (!Number.isInteger(line) || (line as number) < 0)
      throw new ToolInputError('The parameter `insert_line` (a whole number, 0 or more) is required for insert.');
    return insert(t, line as number, stringArg(args, 'new_str', 'insert'));
  }
  return undo(t);
}

function stringArg(args: Record<string, unknown>, name: string, command: string): string {
  const v = args[name];
  if (typeof v !== 'string')
    throw new ToolInputError(`The parameter \`${name}\` (a string) is required for ${command}.`);
  return v;
}

/**
 * Records `before` in the undo history, then writes `text` (inside the quota); the record goes
 * first so that a crash between the two leaves an undo that changes nothing, not an edit that
 * cannot be undone. A write that fails takes its record back.
 */
async function commit(t: Target, before: Before, text: string): Promise<void> {
  const oldBytes = 'text' in before ? Buffer.byteLength(before.text) : undefined;
  await checkQuota(t.ws.files, t.quota, { rel: t.rel, oldBytes, newBytes: Buffer.byteLength(text) });
  const takeBack = await pushHistory(t.ws.state, t.rel, before);
  try {
    await writeAtomic(t, text);
  } catch (err) {
    await takeBack().catch(() => undefined);
    throw err;
  }
}

async function create(t: Target, fileText: string): Promise<string> {
  const st = await statOrMissing(t);
  if (st?.isDirectory()) throw new ToolInputError(`The path ${shown(t.rel)} is a folder.`);
  if (st)
    throw new ToolInputError(
      `File already exists at: ${shown(t.rel)}. Cannot overwrite files using command \`create\`: ` +
        'edit it with str_replace or insert, or remove it first (bash: rm).',
    );
  await commit(t, { absent: true }, fileText);
  return `File created successfully at: ${shown(t.rel)} (${splitLines(fileText).length} lines).\n`;
}

/** Where `needle` starts in `text`, overlapping occurrences included ("aa" twice in "aaa"). */
function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) at.push(i);
  return at;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** "[3, 17, 40]": the lines where the occurrences at `found` start, the first MAX_LISTED of them. */
function startLines(text: string, found: number[]): string {
  const MAX_LISTED = 20;
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const at of found.slice(0, MAX_LISTED)) {
    for (let i = text.indexOf('\n', from); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
    from = at;
    lines.push(line);
  }
  const more = found.length - lines.length;
  return `[${lines.join(', ')}${more ? `, … ${more} more` : ''}]`;
}
const quoted = (s: string) => (s.length > 200 ? `${JSON.stringify(s.slice(0, 200))}…` : JSON.stringify(s));

async function strReplace(t: Target, oldStr: string, newStr: string): Promise<string> {
  if (oldStr === '') throw new ToolInputError('The parameter `old_str` must not be empty.');
  const text = await readText(t);
  const found = occurrences(text, oldStr);
  if (!found.length)
    throw new ToolInputError(
      `No replacement was performed: old_str ${quoted(oldStr)} did not appear verbatim in ${shown(t.rel)} ` +
        '(whitespace and indentation must match; view the file to copy the text).',
    );
  if (found.length > 1)
    throw new ToolInputError(
      `No replacement was performed: old_str occurs ${found.length} times in ${shown(t.rel)}, starting on lines ` +
        `${startLines(text, found)}. Include more of the surrounding lines to make it unique.`,
    );
  const edited = text.slice(0, found[0]) + newStr + text.slice(found[0] + oldStr.length);
  await commit(t, { text }, edited);
  const first = Math.max(1, lineOf(text, found[0]) - SNIPPET_LINES);
  const last = lineOf(text, found[0]) + newStr.split('\n').length - 1 + SNIPPET_LINES;
  return editedResult(t, splitLines(edited).slice(first - 1, last), first);
}

async function insert(t: Target, line: number, newStr: string): Promise<string> {
  const text = await readText(t);
  const lines = splitLines(text);
  if (line > lines.length)
    throw new ToolInputError(
      `Invalid \`insert_line\` ${line}: it must be within [0, ${lines.length}] (the file has ${lines.length} lines; 0 = at the top).`,
    );
  // new_str becomes whole lines; the file keeps its final newline, or its lack of one.
  const added = newStr.endsWith('\n') ? splitLines(newStr) : newStr.split('\n');
  const all = [...lines.slice(0, line), ...added, ...lines.slice(line)];
  const ending = text === '' || text.endsWith('\n') ? '\n' : '';
  await commit(t, { text }, all.join('\n') + ending);
  const first = Math.max(1, line + 1 - SNIPPET_LINES);
  return editedResult(t, all.slice(first - 1, line + added.length + SNIPPET_LINES), first);
}

function editedResult(t: Target, snippet: string[], first: number): string {
  return (
    `The file ${shown(t.rel)} has been edited. ` +
    showLines(snippet, first, `a snippet of ${shown(t.rel)}`) +
    'Review the changes and make sure they are as expected (correct indentation, no duplicate lines). Edit the file again if necessary.\n'
  );
}

async function undo(t: Target): Promise<string> {
  const newest = await newestHistory(t.ws.state, t.rel);
  if (!newest)
    throw new ToolInputError(
      `No edit history found for ${shown(t.rel)} (the editor keeps the last ${HISTORY_DEPTH} edits of each file it edited).`,
    );
  const left = `${newest.remaining} earlier edit(s) can still be undone.`;
  const st = await statOrMissing(t);
  if (st?.isDirectory()) throw new ToolInputError(`The path ${shown(t.rel)} is now a folder: it cannot be restored.`);
  if ('absent' in newest.before) {
    // unlink (no link followed), through the open folder.
    if (!t.missing)
      await fs.rm(t.abs, { force: true }).catch((err) => {
        throw fsError(err, t.rel, 'remove');
      });
    await newest.drop();
    return `Last edit to ${shown(t.rel)} undone successfully: it created the file, which is now removed. ${left}\n`;
  }
  const text = newest.before.text;
  await checkQuota(t.ws.files, t.quota, { rel: t.rel, oldBytes: st?.size, newBytes: Buffer.byteLength(text) });
  await writeAtomic(t, text);
  await newest.drop();
  const shownText = splitLines(text).length
    ? showLines(splitLines(text), 1, shown(t.rel))
    : `The file ${shown(t.rel)} is now empty.\n`;
  return `Last edit to ${shown(t.rel)} undone successfully. ${left} ${shownText}`;
}
