// client.sessions.files: the files of a session's workspace (the agent's computer: what its bash,
// editor and search tools work in), uploaded, listed, downloaded, deleted. A path is relative to
// the workspace, folders separated by `/`; a name may hold any character but `/` and the
// service's refusals (a `..` segment, control characters).
import type { HttpCore, RequestOptions } from './http';
import type { ListFilesQuery, WorkspaceFile, WorkspaceFileList } from './types';

/**
 * The URL path of the session's files, or of one file: the file's path as one percent-encoded
 * segment (its `/` as %2F, which the service reads as folders), so that the URL parser resolves
 * no `.` or `..` in it and the service judges the path as given. A path of dots alone would
 * still be one of the URL's own dot segments: `./` in front keeps it the same path, sent.
 */
function filesPath(session: string, file?: string): string {
  const base = `/sessions/${encodeURIComponent(session)}/files`;
  if (file === undefined) return base;
  return `${base}/${/^\.{1,2}$/.test(file) ? '.%2F' : ''}${encodeURIComponent(file)}`;
}

export class SessionFiles {
  constructor(private readonly core: HttpCore) {}

  /**
   * Writes `data` (bytes, or a string as UTF-8) as the file `path` of the session's workspace,
   * folders made, an existing file replaced. A PayloadTooLargeError when the workspace would pass
   * its quota (nothing is written); a BadRequestError for a path outside the workspace.
   */
  upload(session: string, path: string, data: Uint8Array | string, opts: RequestOptions = {}): Promise<WorkspaceFile> {
    return this.core.json('PUT', filesPath(session, path), { ...opts, raw: data });
  }

  /** Every file of the workspace (at every depth, sorted by path), or those whose path starts with `prefix`. */
  list(session: string, query: ListFilesQuery = {}, opts: RequestOptions = {}): Promise<WorkspaceFileList> {
    return this.core.json('GET', filesPath(session), { ...opts, query: { ...query } });
  }

  /** The file's bytes; a NotFoundError for a missing file (or a folder). */
  download(session: string, path: string, opts: RequestOptions = {}): Promise<Buffer> {
    return this.core.bytes('GET', filesPath(session, path), opts);
  }

  /** Deletes the file; a NotFoundError if there is none at `path`. */
  async delete(session: string, path: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', filesPath(session, path), opts);
  }
}
