// What a call changed in the workspace: its files before and after (path, size, modification
// time), compared. Reported to the stream as agent_files_changed.
import { listWorkspaceFiles } from '../../src/common/workspaces/usage';

export interface FilesChanged {
  created: string[];
  modified: string[];
  deleted: string[];
}

/** Each file's size and modification time (what tells a change), by path. */
export type FilesSnapshot = Map<string, { size: number; modified: string }>;

export async function snapshotFiles(filesDir: string): Promise<FilesSnapshot> {
  const files = await listWorkspaceFiles(filesDir);
  return new Map(files.map((f) => [f.path, { size: f.size, modified: f.modified_at }]));
}

/** The bytes of the snapshot's files (the workspace's size, as its quota counts it). */
export function snapshotBytes(snapshot: FilesSnapshot): number {
  let n = 0;
  for (const f of snapshot.values()) n += f.size;
  return n;
}

/** The paths created, modified and deleted between two snapshots, each list sorted. */
export function changedFiles(before: FilesSnapshot, after: FilesSnapshot): FilesChanged {
  const created: string[] = [];
  const modified: string[] = [];
  for (const [p, now] of after) {
    const was = before.get(p);
    if (was === undefined) created.push(p);
    else if (was.size !== now.size || was.modified !== now.modified) modified.push(p);
  }
  const deleted = [...before.keys()].filter((p) => !after.has(p));
  return { created: created.sort(), modified: modified.sort(), deleted: deleted.sort() };
}
