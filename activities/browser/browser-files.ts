// Screenshots and downloads written into the session's workspace. The agent's shell may be
// running in that folder at the same moment and could swap `screenshots/` for a link to /etc
// between a check and a write; so the folder is pinned (pinned.ts: each folder on the way opened
// without following a link, links leading out refused), the bytes go to a new temporary name in
// the pinned folder (O_EXCL | O_NOFOLLOW: never an existing file, link or FIFO), and a rename in
// that same open folder puts them in place (rename replaces a link, never follows it).
import { randomBytes } from 'node:crypto';
import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pinWorkspacePath, openNoFollow } from '../../src/common/workspaces/pinned';
import { WORKSPACE_MOUNT } from '../../workflows/tool-registry';

/** Where a file went: workspace-relative, and as the agent sees it. */
export interface SavedFile {
  rel: string;
  shown: string;
  bytes: number;
}

/** A file whose content is too large to keep (downloads). */
export class FileTooLargeError extends Error {
  override readonly name = 'FileTooLargeError';
}

/**
 * A file name from a page or the model made safe as one name in a folder: no path, no control
 * characters, no leading dot (hidden files, `..`), at most 120 characters; '' when nothing is left.
 */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[^\p{L}\p{N}._ -]+/gu, '-')
    .replace(/^[.\s-]+/, '')
    .trim();
  if (cleaned.length <= 120) return cleaned;
  const ext = path.extname(cleaned).slice(0, 10);
  return cleaned.slice(0, 120 - ext.length) + ext;
}

/** Writes `content` into `folder/name` of the workspace `filesDir`, replacing a file of that name. */
export async function saveInWorkspace(
  filesDir: string,
  folder: string,
  name: string,
  content: Buffer | Readable,
  maxBytes = Infinity,
): Promise<SavedFile> {
  const pinned = await pinWorkspacePath(filesDir, `${folder}/${name}`, { makeParents: true });
  try {
    // abs is /proc/self/fd/<folder's fd>/<name>: its dirname stays the folder that was opened.
    const tmp = path.posix.join(path.posix.dirname(pinned.abs), `.${randomBytes(6).toString('hex')}.partial`);
    const bytes = await writeNew(tmp, content, maxBytes);
    try {
      await fs.rename(tmp, pinned.abs);
    } catch (err) {
      await fs.unlink(tmp).catch(() => undefined);
      throw err;
    }
    return { rel: pinned.real, shown: `${WORKSPACE_MOUNT}/${pinned.real}`, bytes };
  } finally {
    await pinned.close();
  }
}

/** Writes a new file (never an existing one), removed again when the write fails or `maxBytes` is passed. */
async function writeNew(abs: string, content: Buffer | Readable, maxBytes: number): Promise<number> {
  const fh = await openNoFollow(abs, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o644);
  let bytes = 0;
  try {
    if (Buffer.isBuffer(content)) {
      await fh.writeFile(content);
      bytes = content.length;
    } else {
      for await (const chunk of content as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > maxBytes) throw new FileTooLargeError(`the file is larger than ${maxBytes} bytes`);
        await fh.write(chunk);
      }
    }
    await fh.close();
    return bytes;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fs.unlink(abs).catch(() => undefined);
    if (!Buffer.isBuffer(content)) content.destroy();
    throw err;
  }
}

/** `name` if no entry of that name is in `folder`, else name-1.ext, name-2.ext, ... (downloads keep every file). */
export async function freeName(filesDir: string, folder: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; i < 1000; i++) {
    const candidate = i === 0 ? name : `${stem}-${i}${ext}`;
    const pinned = await pinWorkspacePath(filesDir, `${folder}/${candidate}`, { makeParents: true });
    try {
      const taken = await fs.lstat(pinned.abs).then(
        () => true,
        () => false,
      );
      if (!taken) return candidate;
    } finally {
      await pinned.close();
    }
  }
  return `${stem}-${randomBytes(4).toString('hex')}${ext}`;
}
