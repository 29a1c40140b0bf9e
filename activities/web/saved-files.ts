// Files the web tools leave in the session's workspace (a download, a long page's whole text), so
// the agent can go on with them: read them with the editor, process them with bash. Written the
// way the editor writes (pinned folders, a temporary file and a rename), because the agent's shell
// may run in the same workspace at the same moment; within the workspace's quota.
import { createHash } from 'node:crypto';
import {
  type WorkspaceQuota,
  checkQuota,
  pinToolPath,
  shown,
  statOrMissing,
  writeAtomic,
} from '../computer/editor-files';

/** The workspace folder web files go to. */
export const DOWNLOADS = 'downloads';

/**
 * A file name for what `url` gave: its host and last path segment, made safe, and a short hash
 * of the whole URL so two pages never share a file (fetching the same URL again replaces it).
 */
export function savedName(url: string, extension: string): string {
  const u = new URL(url);
  const last = u.pathname.split('/').filter(Boolean).pop() ?? '';
  const stem = `${u.hostname}${last ? `-${last.replace(/\.[a-z0-9]{1,5}$/i, '')}` : ''}`
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(0, 80);
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 8);
  return `${DOWNLOADS}/${stem}-${hash}.${extension}`;
}

/**
 * Writes `bytes` to the workspace-relative `rel` (folders made); the path as the agent sees it
 * (/workspace/...). Throws ToolInputError when the quota does not allow it.
 */
export async function saveToWorkspace(
  filesDir: string,
  rel: string,
  bytes: string | Uint8Array,
  quota: WorkspaceQuota,
): Promise<string> {
  const p = await pinToolPath(filesDir, rel, true);
  try {
    const before = await statOrMissing(p);
    const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength;
    await checkQuota(filesDir, quota, { rel: p.rel, oldBytes: before?.size, newBytes: size });
    await writeAtomic(p, bytes);
    return shown(p.rel);
  } finally {
    await p.close();
  }
}
