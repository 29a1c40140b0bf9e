// A path the agent or an API caller names inside a workspace, checked before any file is touched:
// relative (or absolute under /workspace, as the agent sees it), normalised, never outside the
// workspace by `..` or by an absolute path elsewhere. Links on the way are followed, and one that
// leads out refused, when the path is pinned (pinned.ts), which the files API and the computer's
// tools both do.
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
