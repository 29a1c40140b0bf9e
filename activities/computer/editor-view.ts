// What the editor shows: a file's lines numbered as `cat -n` does (the format models know from
// the reference editor tool), cut to a size a model's context can take, and a folder two levels
// deep. Tabs are shown as they are (the reference expands them, then expands them in the file on
// the next edit too, which breaks a Makefile): old_str copied from a view then matches the file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ToolInputError } from '../tools/builtin';
import { readdirNoFollow } from '../../src/common/workspaces/pinned';
import { readText, shown, type ToolPath } from './editor-files';

/** Most characters of one view (a file's lines or a folder's entries); the rest is not shown. */
export const VIEW_MAX_CHARS = 30_000;
/** Most characters of one line shown (a minified file is one line of megabytes). */
export const VIEW_MAX_LINE_CHARS = 2_000;
/** Most entries of a folder's view. */
export const VIEW_MAX_ENTRIES = 1_000;

/** The lines of `text`: a final newline ends the last line, it does not start another. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/**
 * `lines` numbered from `first` (`     7\tconst x = 1;`), within VIEW_MAX_CHARS: returns the
 * text and how many of the lines it holds.
 */
export function numbered(lines: readonly string[], first: number): { text: string; count: number } {
  const out: string[] = [];
  let size = 0;
  for (const [i, line] of lines.entries()) {
    const cut =
      line.length > VIEW_MAX_LINE_CHARS
        ? `${line.slice(0, VIEW_MAX_LINE_CHARS)}… [${line.length - VIEW_MAX_LINE_CHARS} more characters on this line]`
        : line;
    const row = `${String(first + i).padStart(6)}\t${cut}`;
    if (out.length && size + row.length + 1 > VIEW_MAX_CHARS) break;
    out.push(row);
    size += row.length + 1;
  }
  return { text: out.join('\n'), count: out.length };
}

/** `lines` numbered from `first`, with a note saying what was cut and how to see it. */
export function showLines(lines: readonly string[], first: number, label: string): string {
  const { text, count } = numbered(lines, first);
  const head = `Here's the result of running \`cat -n\` on ${label}:\n${text}\n`;
  if (count === lines.length) return head;
  const next = first + count;
  return (
    head +
    `[Cut to keep the output under ${VIEW_MAX_CHARS} characters: lines ${first}-${next - 1} shown, ` +
    `${lines.length - count} more not shown. See them with view_range (e.g. [${next}, ${next + 199}]), or find lines with grep.]\n`
  );
}

function parseRange(range: unknown): [number, number] {
  if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n)))
    throw new ToolInputError('Invalid `view_range`: it must be a list of two whole numbers, [first, last].');
  return [range[0], range[1]];
}

/** The view of a file: all of it, or `view_range` [first, last] (last -1 = to the end). */
export async function viewFile(p: ToolPath, range: unknown): Promise<string> {
  const { rel } = p;
  const lines = splitLines(await readText(p));
  const n = lines.length;
  if (range === undefined) return n ? showLines(lines, 1, shown(rel)) : `The file ${shown(rel)} is empty.\n`;
  const [first, lastAsked] = parseRange(range);
  if (first < 1 || first > n)
    throw new ToolInputError(
      n
        ? `Invalid \`view_range\` [${first}, ${lastAsked}]: its first line ${first} must be within [1, ${n}] (the file has ${n} lines).`
        : `Invalid \`view_range\`: the file ${shown(rel)} is empty.`,
    );
  if (lastAsked !== -1 && lastAsked < first)
    throw new ToolInputError(
      `Invalid \`view_range\` [${first}, ${lastAsked}]: its last line must be at least its first, or -1 (to the end).`,
    );
  // Past the end is read as "to the end" (said in the result), rather than costing a turn.
  const last = lastAsked === -1 || lastAsked > n ? n : lastAsked;
  const note = lastAsked > n ? `[The file has ${n} lines: shown to line ${n}.]\n` : '';
  return showLines(lines.slice(first - 1, last), first, shown(rel)) + note;
}

interface Listing {
  rows: string[];
  hidden: number;
}

/** Entries of `abs` (`rel` in the workspace) and one level below, hidden ones left out, sorted. */
async function list(abs: string, rel: string, depth: number, into: Listing): Promise<void> {
  // Each folder opened without following a link (one swapped in since lists nothing).
  const entries = await readdirNoFollow(abs).catch(() => []);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) {
      into.hidden++;
      continue;
    }
    const childRel = rel ? `${rel}/${e.name}` : e.name;
    const childAbs = path.join(abs, e.name);
    if (e.isSymbolicLink()) {
      const target = await fs.readlink(childAbs).catch(() => '?');
      into.rows.push(`${shown(childRel)} -> ${target}`);
    } else if (e.isDirectory()) {
      into.rows.push(`${shown(childRel)}/`);
      if (depth < 2) await list(childAbs, childRel, depth + 1, into);
    } else into.rows.push(shown(childRel));
  }
}

/** The view of a folder: its files and folders two levels deep (folders end in /, links show their target). */
export async function viewFolder(abs: string, rel: string, range: unknown): Promise<string> {
  if (range !== undefined)
    throw new ToolInputError('The `view_range` parameter is not allowed when `path` points to a folder.');
  const listing: Listing = { rows: [], hidden: 0 };
  await list(abs, rel, 1, listing);
  const rows = listing.rows.slice(0, VIEW_MAX_ENTRIES);
  let size = 0;
  const kept = rows.filter((r) => (size += r.length + 1) <= VIEW_MAX_CHARS);
  const more = listing.rows.length - kept.length;
  const hidden = listing.hidden ? ` (${listing.hidden} hidden, whose names start with a dot, not shown)` : '';
  return (
    `Here are the files and folders up to 2 levels deep in ${shown(rel)}, excluding hidden items${hidden}:\n` +
    (kept.length ? `${kept.join('\n')}\n` : '(empty)\n') +
    (more ? `[${more} more not shown: view a subfolder, or use glob.]\n` : '')
  );
}
