// The editor's file access: reading a workspace file as text (refusing binary and oversized ones,
// whose bytes the model cannot use), writing one atomically, the workspace quota a write must fit,
// and one edit at a time per file. fs errors become ToolInputError: the model reads what went wrong.
import { randomBytes } from 'node:crypto';
import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '../../workflows/tool-registry';
import { normaliseWorkspacePath, WorkspacePathError } from '../../src/common/workspaces/paths';
import { openNoFollow, pinWorkspacePath } from '../../src/common/workspaces/pinned';
import { workspaceUsage } from '../../src/common/workspaces/usage';
import { ToolInputError } from '../tools/builtin';

/** The workspace's limits (config WORKSPACE_MAX_BYTES, WORKSPACE_MAX_FILES). */
export interface WorkspaceQuota {
  maxBytes: number;
  maxFiles: number;
}

/**
 * The largest file the editor opens. Its commands hold a file in memory (and its undo history
 * keeps whole copies), so a log of gigabytes is left to grep and bash, which stream it.
 */
export const EDITOR_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** How the agent sees a workspace-relative path: under /workspace. */
export const shown = (rel: string): string => (rel ? `${WORKSPACE_MOUNT}/${rel}` : WORKSPACE_MOUNT);

/** 1536 → "1.5 KiB": sizes in messages the model reads. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[u]}`;
}

/** A tool's path, pinned (src/common/workspaces/pinned.ts); `missing` when a folder on the way is not there. */
export interface ToolPath {
  /** As the agent named it, normalised. */
  rel: string;
  /** The entry through its open folder (links inside the workspace followed); use no more once closed. */
  abs: string;
  missing: boolean;
  /** Why it is missing: ENOENT (a folder on the way is not there) or ENOTDIR (a file is). */
  missingCode?: string;
  close(): Promise<void>;
}

/**
 * pinWorkspacePath for a tool: a path out of the workspace is an error the model reads; a missing
 * folder on the way (made, with `makeParents`) leaves the path `missing`.
 */
export async function pinToolPath(filesDir: string, name: string, makeParents = false): Promise<ToolPath> {
  try {
    return { ...(await pinWorkspacePath(filesDir, name, { makeParents })), missing: false };
  } catch (err) {
    if (err instanceof WorkspacePathError) throw new ToolInputError(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    return {
      rel: normaliseWorkspacePath(name),
      abs: '',
      missing: true,
      missingCode: code,
      close: async () => undefined,
    };
  }
}

/** The lstat of a pinned path (links were followed when it was pinned), or undefined when nothing is there. */
export async function statOrMissing(p: ToolPath) {
  if (p.missing) return undefined;
  try {
    return await fs.lstat(p.abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** An fs failure as the message the model reads (the host path replaced by the agent's). */
export function fsError(err: unknown, rel: string, doing: string): Error {
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    ENOENT: 'it does not exist',
    ENOTDIR: 'a part of the path is a file, not a folder',
    EISDIR: 'it is a folder',
    // From mkdir: a file stands where a folder of the path should be.
    EEXIST: 'a part of the path is a file, not a folder',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOSPC: 'the disk is full',
    // A link put in the pinned entry's place since (a command racing the editor): never followed.
    ELOOP: 'it was replaced by a link while the editor worked on it',
  };
  if (e?.code && known[e.code]) return new ToolInputError(`cannot ${doing} ${shown(rel)}: ${known[e.code]}`);
  return err instanceof Error ? err : new Error(String(err));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of the regular file `abs`. Refused (ToolInputError): a folder, a file over
 * EDITOR_MAX_FILE_BYTES, and a binary one (a NUL byte, as git and grep decide, or bytes that are
 * not UTF-8: decoding and writing back would corrupt it).
 */
export async function readText(p: ToolPath): Promise<string> {
  const { rel } = p;
  if (p.missing) throw new ToolInputError(`The path ${shown(rel)} does not exist.`);
  const handle = await openNoFollow(p.abs, C.O_RDONLY | C.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new ToolInputError(`The path ${shown(rel)} does not exist.`);
    throw fsError(err, rel, 'read');
  });
  let bytes: Buffer;
  try {
    const st = await handle.stat();
    if (st.isDirectory())
      throw new ToolInputError(`The path ${shown(rel)} is a folder: only the view command works on folders.`);
    if (!st.isFile()) throw new ToolInputError(`The path ${shown(rel)} is not a regular file.`);
    if (st.size > EDITOR_MAX_FILE_BYTES)
      throw new ToolInputError(
        `${shown(rel)} is ${formatBytes(st.size)}: the editor opens files up to ${formatBytes(EDITOR_MAX_FILE_BYTES)}. ` +
          `Find lines with grep, or read parts with bash (sed -n '100,200p' FILE, head, tail).`,
      );
    bytes = await handle.readFile().catch((err) => {
      throw fsError(err, rel, 'read');
    });
  } finally {
    await handle.close();
  }
  const binary = () =>
    new ToolInputError(
      `${shown(rel)} is a binary file (${formatBytes(bytes.length)}): the editor shows and edits text (UTF-8) only. ` +
        'Inspect it with bash (file, xxd | head).',
    );
  if (bytes.includes(0)) throw binary();
  try {
    return utf8.decode(bytes);
  } catch {
    throw binary();
  }
}

/**
 * Writes `text` to the pinned entry through a temporary file in its open folder and a rename (which
 * replaces a link put there since rather than following it), so a crash leaves the old file or
 * the new one, never half of one. The file replaced keeps its mode (a script stays executable)
 * and, where the worker may, its owner. Its folder exists: it was pinned with makeParents.
 */
export async function writeAtomic(p: ToolPath, text: string | Uint8Array): Promise<void> {
  const { abs, rel } = p;
  if (p.missing) throw fsError({ code: p.missingCode }, rel, 'write');
  const dir = path.dirname(abs);
  const before = await statOrMissing(p);
  const tmp = path.join(dir, `.${path.basename(abs)}.${randomBytes(6).toString('hex')}.editor-tmp`);
  try {
    // 'wx' (O_EXCL) never follows a link.
    const handle = await fs.open(tmp, 'wx', before ? before.mode & 0o7777 : 0o666);
    try {
      await handle.writeFile(text, 'utf8');
      if (before) await handle.chmod(before.mode & 0o7777);
      if (before && (before.uid !== process.getuid?.() || before.gid !== process.getgid?.()))
        await handle.chown(before.uid, before.gid).catch(() => undefined);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, abs);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw fsError(err, rel, 'write');
  }
}

/**
 * Refuses (ToolInputError) a write that would take the workspace `filesDir` over its quota:
 * `abs` becoming `newBytes` long, replacing `oldBytes` (undefined: a new file).
 */
export async function checkQuota(
  filesDir: string,
  quota: WorkspaceQuota,
  change: { rel: string; oldBytes: number | undefined; newBytes: number },
): Promise<void> {
  const usage = await workspaceUsage(filesDir);
  const bytes = usage.bytes - (change.oldBytes ?? 0) + change.newBytes;
  const files = usage.files + (change.oldBytes === undefined ? 1 : 0);
  const holds = `the workspace holds ${formatBytes(usage.bytes)} in ${usage.files} files`;
  const limits = `its quota is ${formatBytes(quota.maxBytes)} and ${quota.maxFiles} files`;
  if (bytes > quota.maxBytes || files > quota.maxFiles)
    throw new ToolInputError(
      `Refused: writing ${shown(change.rel)} (${formatBytes(change.newBytes)}) would take the workspace over its quota: ` +
        `${holds}; ${limits}. Delete files you no longer need (bash: rm) and try again.`,
    );
}

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier call with the same `key` has ended: two edits of one file in the
 * same round of parallel tool calls would otherwise both read the old text, and one be lost.
 */
export async function oneAtATime<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(fn);
  const settled = run.catch(() => undefined);
  queues.set(key, settled);
  try {
    return await run;
  } finally {
    if (queues.get(key) === settled) queues.delete(key);
  }
}
