// What a workspace holds: its files (the files API's list) and how much (its quota). A walk of
// the folder, links not followed; only regular files count and are listed.
import fs from 'node:fs/promises';
import path from 'node:path';

export interface WorkspaceFile {
  /** Relative to the workspace, posix. */
  path: string;
  size: number;
  /** ISO 8601. */
  modified_at: string;
}

export interface WorkspaceUsage {
  bytes: number;
  files: number;
}

/** Every regular file under `dir` (recursively; links not followed), sorted by path. Empty when `dir` does not exist. */
export async function listWorkspaceFiles(dir: string, prefix = ''): Promise<WorkspaceFile[]> {
  const out: WorkspaceFile[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(abs, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const childAbs = path.join(abs, e.name);
      if (e.isDirectory()) await walk(childAbs, childRel);
      else if (e.isFile() && childRel.startsWith(prefix)) {
        const st = await fs.lstat(childAbs).catch(() => undefined);
        if (st) out.push({ path: childRel, size: st.size, modified_at: st.mtime.toISOString() });
      }
    }
  };
  await walk(dir, '');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Bytes and files under `dir` (allocated bytes are not counted: a sparse file counts its length). */
export async function workspaceUsage(dir: string): Promise<WorkspaceUsage> {
  const files = await listWorkspaceFiles(dir);
  return { bytes: files.reduce((n, f) => n + f.size, 0), files: files.length };
}
