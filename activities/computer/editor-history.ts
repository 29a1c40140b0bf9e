// The editor's undo history: for each file, what it held before each of its last edits (its text,
// or that it did not exist yet), newest last, at most HISTORY_DEPTH. It lives in the workspace's
// state folder, which the agent never sees (so it cannot be edited around, nor fill the files'
// quota), on disk, so undo works in the session's later runs and after a worker restart.
// Layout: state/editor-history/<sha256 of the path>/<sequence>.text | .absent, and `path`, the
// file's workspace path, for whoever looks at the folder.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Edits of one file that undo_edit can take back, one after another. */
export const HISTORY_DEPTH = 10;

/** A file's content before an edit: its text, or nothing (the edit created it). */
export type Before = { text: string } | { absent: true };

const ENTRY = /^(\d{12})\.(text|absent)$/;

const folderOf = (stateDir: string, rel: string) =>
  path.join(stateDir, 'editor-history', createHash('sha256').update(rel).digest('hex').slice(0, 32));

async function entries(folder: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(folder);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // Twelve digits, zero-padded: name order is sequence order.
  return names.filter((n) => ENTRY.test(n)).sort();
}

/** Writes by a temporary file and a rename: a crash must not leave half a text to undo to. */
async function writeWhole(file: string, data: string): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.writeFile(tmp, data, { encoding: 'utf8', flush: true });
  await fs.rename(tmp, file);
}

/**
 * Records `before` as the newest state of `rel` to undo to, dropping the oldest beyond
 * HISTORY_DEPTH. Returns a function that removes this record again (the edit it was for failed).
 */
export async function pushHistory(stateDir: string, rel: string, before: Before): Promise<() => Promise<void>> {
  const folder = folderOf(stateDir, rel);
  await fs.mkdir(folder, { recursive: true });
  const names = await entries(folder);
  if (!names.length) await writeWhole(path.join(folder, 'path'), rel);
  const last = names.length ? Number(ENTRY.exec(names[names.length - 1])![1]) : 0;
  const name = `${String(last + 1).padStart(12, '0')}.${'text' in before ? 'text' : 'absent'}`;
  await writeWhole(path.join(folder, name), 'text' in before ? before.text : '');
  const excess = names.length + 1 - HISTORY_DEPTH;
  for (const old of names.slice(0, Math.max(0, excess))) await fs.rm(path.join(folder, old), { force: true });
  return () => fs.rm(path.join(folder, name), { force: true });
}

/**
 * The newest recorded state of `rel`, with the function that removes it once the file is back
 * to it (so that the next undo goes one further); undefined when there is none.
 */
export async function newestHistory(
  stateDir: string,
  rel: string,
): Promise<{ before: Before; remaining: number; drop: () => Promise<void> } | undefined> {
  const folder = folderOf(stateDir, rel);
  const names = await entries(folder);
  const name = names[names.length - 1];
  if (name === undefined) return undefined;
  const file = path.join(folder, name);
  const before: Before = name.endsWith('.absent') ? { absent: true } : { text: await fs.readFile(file, 'utf8') };
  const remaining = names.length - 1;
  // The last record gone, its folder goes too (`path` alone would stay behind, for every file ever edited).
  const drop = () => fs.rm(remaining ? file : folder, { force: true, recursive: true });
  return { before, remaining, drop };
}
