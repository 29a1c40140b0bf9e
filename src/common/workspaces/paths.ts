// A path the agent or an API caller names inside a workspace, checked before any file is touched:
// relative (or absolute under /workspace, as the agent sees it), normalised, never outside the
// workspace, whether by `..`, by an absolute path elsewhere, or by a symbolic link that leads out.
// The one check of workspace paths: the files API and the computer's tools both use it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '../../../workflows/tool-registry';

/** A path that is not one of the workspace's: the files API answers 400, a tool an error result. */
export class WorkspacePathError extends Error {
  override readonly name = 'WorkspacePathError';
}

/**
 * The workspace-relative form of `name` (posix, no `.` or `..` segments, no leading or trailing
 * slash; '' = the workspace itself). Throws WorkspacePathError for a path outside the workspace.
 */
export function normaliseWorkspacePath(name: string): string {
  if (typeof name !== 'string') throw new WorkspacePathError('the path must be a string');
  if (name.includes('\0')) throw new WorkspacePathError('the path contains a NUL character');
  let rel = name.replace(/\\/g, '/');
  if (rel === WORKSPACE_MOUNT || rel.startsWith(`${WORKSPACE_MOUNT}/`)) rel = rel.slice(WORKSPACE_MOUNT.length);
  else if (rel.startsWith('/'))
    throw new WorkspacePathError(`${JSON.stringify(name)} is absolute: name it relative to the workspace`);
  const segments: string[] = [];
  for (const part of rel.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!segments.length) throw new WorkspacePathError(`${JSON.stringify(name)} leads out of the workspace`);
      segments.pop();
    } else segments.push(part);
  }
  return segments.join('/');
}

/**
 * The host path of `name` in the workspace folder `filesDir`, after checking that no symbolic
 * link on the way (the file itself included) resolves outside the workspace. Parts that do not
 * exist yet are fine (a file to create).
 */
export async function resolveWorkspacePath(filesDir: string, name: string): Promise<{ rel: string; abs: string }> {
  const rel = normaliseWorkspacePath(name);
  const root = path.resolve(filesDir);
  const abs = rel ? path.join(root, ...rel.split('/')) : root;
  let probe = root;
  for (const part of rel ? rel.split('/') : []) {
    probe = path.join(probe, part);
    let st;
    try {
      st = await fs.lstat(probe);
    } catch (err) {
      // Missing, or under a regular file (ENOTDIR): nothing further exists, so no link either; the
      // caller's own open or write then says what is wrong with the path.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') break;
      throw err;
    }
    if (!st.isSymbolicLink()) continue;
    // A link whose target is missing (or a loop) is refused too: what it would lead to once the
    // target exists cannot be checked now, and writing through it could create a file outside.
    const target = await fs.realpath(probe).catch(() => undefined);
    if (target === undefined)
      throw new WorkspacePathError(`${JSON.stringify(name)} goes through a broken link (its target does not exist)`);
    const realRoot = await fs.realpath(root);
    if (!(target === realRoot || target.startsWith(realRoot + path.sep)))
      throw new WorkspacePathError(`${JSON.stringify(name)} goes through a link that leads out of the workspace`);
  }
  return { rel, abs };
}
