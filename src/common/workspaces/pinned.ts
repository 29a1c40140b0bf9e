// A workspace path resolved without a race against a command running in the sandbox at the same
// moment (a DAG's parallel steps of one session, an upload while a command runs). Checking a path
// and then using it by name leaves a window in which a command could swap a folder on the way for
// a link to /etc; so here each folder on the way is opened in turn, without following a link
// (O_NOFOLLOW), and the next name is looked up in the folder that was opened, through
// /proc/self/fd/<fd>, not through the path again. A link inside the workspace is followed by
// reading it and resolving its target the same way from the workspace's root; one that leads out
// is refused. The caller gets a path through the open folder (`abs`), which keeps meaning that
// folder whatever happens to the names above it, and must open the last name without following
// a link (openNoFollow) or use calls that never follow one (lstat, rename, unlink, mkdir).
// Linux only (/proc), as the sandbox is.
import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import { WORKSPACE_MOUNT } from '../../../workflows/tool-registry';
import { normaliseWorkspacePath, WorkspacePathError } from './paths';

/** Links followed in one resolution before it is refused (as the kernel's ELOOP). */
const MAX_LINKS = 40;
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;

/** A workspace path whose folders are held open: `abs` names the entry through the open folder. */
export interface PinnedPath {
  /** The path as the caller named it, normalised (for messages and keys). */
  rel: string;
  /** Where it leads once links inside the workspace are followed, workspace-relative. */
  real: string;
  /**
   * The entry through its open parent folder (`/proc/self/fd/<fd>/<name>`), or the open folder
   * itself (`/proc/self/fd/<fd>/.`) for the workspace's root. Open it with openNoFollow; lstat, rename, unlink use it as is.
   */
  abs: string;
  /** Closes the folder held open; use `abs` no more. */
  close(): Promise<void>;
}

const fdPath = (fd: number, name?: string) =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

/** The workspace-relative path a link's target names, or a WorkspacePathError when it leads out. */
function linkTarget(target: string, linkDir: string, realRoot: string, shown: string): string {
  let rel: string;
  if (target === WORKSPACE_MOUNT || target.startsWith(`${WORKSPACE_MOUNT}/`))
    rel = target.slice(WORKSPACE_MOUNT.length);
  else if (target === realRoot || target.startsWith(`${realRoot}/`)) rel = target.slice(realRoot.length);
  else if (target.startsWith('/'))
    throw new WorkspacePathError(`${JSON.stringify(shown)} goes through a link that leads out of the workspace`);
  else rel = linkDir ? `${linkDir}/${target}` : target;
  try {
    return normaliseWorkspacePath(rel.replace(/^\/+/, ''));
  } catch {
    throw new WorkspacePathError(`${JSON.stringify(shown)} goes through a link that leads out of the workspace`);
  }
}

async function openDir(at: string): Promise<fs.FileHandle> {
  return fs.open(at, DIR_FLAGS);
}

/**
 * Pins `name` in the workspace folder `filesDir`: every folder on the way opened without following
 * a link, links inside the workspace followed (the last name's too), one leading out refused
 * (WorkspacePathError). With `makeParents`, missing folders on the way are made, each in the open
 * folder above it. A missing folder on the way otherwise fails with ENOENT (ENOTDIR for a file).
 */
export async function pinWorkspacePath(
  filesDir: string,
  name: string,
  opts: { makeParents?: boolean } = {},
): Promise<PinnedPath> {
  const rel = normaliseWorkspacePath(name);
  if (opts.makeParents) await fs.mkdir(filesDir, { recursive: true });
  const realRoot = await fs.realpath(filesDir);
  let todo = rel ? rel.split('/') : [];
  let done: string[] = [];
  let links = 0;
  let dir = await openDir(realRoot);
  try {
    while (todo.length) {
      const [part, ...rest] = todo;
      const last = rest.length === 0;
      const at = fdPath(dir.fd, part);
      const st = await fs.lstat(at).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' && !last && opts.makeParents) return undefined;
        if (err.code === 'ENOENT' && last) return undefined;
        throw err;
      });
      if (st?.isSymbolicLink()) {
        if (++links > MAX_LINKS) throw new WorkspacePathError(`${JSON.stringify(name)} goes through too many links`);
        const target = linkTarget(await fs.readlink(at), done.join('/'), realRoot, name);
        todo = [...(target ? target.split('/') : []), ...rest];
        done = [];
        await dir.close();
        dir = await openDir(realRoot);
        continue;
      }
      if (last) return pinned(rel, [...done, part].join('/'), dir, part);
      if (!st)
        await fs
          .mkdir(at)
          .catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)));
      const next = await openDir(at);
      await dir.close();
      dir = next;
      done.push(part);
      todo = rest;
    }
    return pinned(rel, done.join('/'), dir);
  } catch (err) {
    await dir.close();
    throw err;
  }
}

function pinned(rel: string, real: string, dir: fs.FileHandle, last?: string): PinnedPath {
  // The folder itself as `<fd>/.`: /proc/self/fd/<fd> alone is a link to lstat and O_NOFOLLOW.
  return { rel, real, abs: fdPath(dir.fd, last ?? '.'), close: () => dir.close() };
}

/** Opens a pinned entry without following a link in its place (one put there since: ELOOP). */
export function openNoFollow(abs: string, flags: number, mode?: number): Promise<fs.FileHandle> {
  return fs.open(abs, flags | C.O_NOFOLLOW, mode);
}

/** The entries of a folder opened without following a link (a link swapped in since fails ENOTDIR or ELOOP). */
export async function readdirNoFollow(abs: string): Promise<import('node:fs').Dirent[]> {
  const dir = await fs.open(abs, DIR_FLAGS);
  try {
    return await fs.readdir(fdPath(dir.fd), { withFileTypes: true });
  } finally {
    await dir.close();
  }
}

/** `abs` for a child process, which has descriptors of its own: the worker's open folder by its pid. */
export function forChild(abs: string): string {
  return abs.replace(/^\/proc\/self\//, `/proc/${process.pid}/`);
}
