// The files of a session's workspace over HTTP (routes/session-files.ts): list, upload, download,
// delete. The gateway reads and writes the workspace folder itself (every gateway and worker sees
// the same storage: WORKSPACE_DIR); only the workspace's files folder, never its state folder.
// Every call first asks whether the account has the session (a 404 otherwise, as every route
// under /sessions/{id} answers), then checks the path on the folder (links that lead out).
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { workspaceDir, type Config } from '../../common/config';
import type { Account } from '../../common/accounts/registry';
import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  UnprocessableRequestError,
  ValidationError,
} from '../../common/errors';
import { sessionWorkspace } from '../../common/workspaces/layout';
import { normaliseWorkspacePath, WorkspacePathError } from '../../common/workspaces/paths';
import { pinWorkspacePath } from '../../common/workspaces/pinned';
import { listWorkspaceFiles, workspaceUsage, type WorkspaceFile } from '../../common/workspaces/usage';
import type { SessionService } from './session-service';
import { conflictOf, writeUpload, type UploadBody } from './file-upload';

/** Where a file's path is in the request, for every 4xx about it. */
export const FILE_PATH_AT = 'path.path';

export interface FileWritten {
  file: WorkspaceFile;
  /** false: an existing file was replaced. */
  created: boolean;
}

export interface FileRead {
  file: WorkspaceFile;
  /** The file's bytes; the caller reads it to its end or destroys it. */
  body: Readable;
}

type FilesConfig = Pick<Config, 'WORKSPACE_DIR' | 'DATA_DIR' | 'WORKSPACE_MAX_BYTES' | 'WORKSPACE_MAX_FILES'>;

/** 1048576 → "1 MiB", 1536 → "1.5 KiB", 12 → "12 bytes". */
const bytesText = (n: number) =>
  n >= 1024 * 1024
    ? `${+(n / 1024 / 1024).toFixed(2)} MiB`
    : n >= 1024
      ? `${+(n / 1024).toFixed(2)} KiB`
      : `${n} bytes`;

export class SessionFiles {
  constructor(
    private readonly config: FilesConfig,
    private readonly sessions: Pick<SessionService, 'require'>,
  ) {}

  /** The session's files folder, once the account is known to have the session. */
  private async folder(account: Account, session: string): Promise<string> {
    await this.sessions.require(account, session);
    return sessionWorkspace(workspaceDir(this.config), account.account, session).files;
  }

  /**
   * `name` in the session's workspace, pinned (a 400 for a link that leads out): `abs` reaches it
   * through its open folder, so a command swapping a folder for a link meanwhile cannot redirect
   * the call (src/common/workspaces/pinned.ts). `close()` it when done. A missing folder on the
   * way is a 404, or with `makeParents` is made (a file in its place: 409).
   */
  private async pin(account: Account, session: string, name: string, makeParents = false) {
    const root = await this.folder(account, session);
    const p = await pinWorkspacePath(root, name, { makeParents }).catch((err) => {
      // A name that is no workspace path fails before any file is looked at: it is normalisable here.
      if (err instanceof WorkspacePathError) throw pathError(err);
      const rel = normaliseWorkspacePath(name);
      throw (makeParents ? conflictOf(err, rel) : missing(err, rel)) ?? pathError(err);
    });
    return { root, rel: p.rel, abs: p.abs, close: p.close };
  }

  list(account: Account, session: string, prefix = ''): Promise<WorkspaceFile[]> {
    return this.folder(account, session).then((dir) => listWorkspaceFiles(dir, prefix));
  }

  /** The file and its bytes; a 404 for a missing file or a folder. */
  async read(account: Account, session: string, name: string): Promise<FileRead> {
    const { root, rel, abs, close } = await this.pin(account, session, name);
    const handle = await fs
      .open(abs, constants.O_RDONLY | constants.O_NOFOLLOW)
      .catch((err) => {
        throw missing(err, rel) ?? pathError(err);
      })
      .finally(close);
    try {
      await openedInside(handle.fd, root, rel);
      const st = await handle.stat();
      if (!st.isFile()) throw new NotFoundError(`${JSON.stringify(rel)} is a folder, not a file`);
      const file = { path: rel, size: st.size, modified_at: st.mtime.toISOString() };
      if (!st.size) {
        await handle.close();
        return { file, body: Readable.from([]) };
      }
      // Exactly the bytes Content-Length promised, should the file grow meanwhile.
      return { file, body: handle.createReadStream({ start: 0, end: st.size - 1 }) };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /**
   * Writes the upload `body` as the file `name`, replacing one there. A 413 before anything is
   * read when `declaredLength` or one more file passes the workspace's quota, else as soon as
   * the bytes that came do.
   */
  async write(
    account: Account,
    session: string,
    name: string,
    body: UploadBody,
    declaredLength?: number,
  ): Promise<FileWritten> {
    const { root, rel, abs, close } = await this.pin(account, session, name, true);
    try {
      const existing = await fs.lstat(abs).catch((err) => {
        if (isMissing(err)) return undefined;
        throw pathError(err);
      });
      if (existing?.isDirectory())
        throw new ConflictError(`${JSON.stringify(rel)} is a folder of the workspace; a file cannot replace it`, {
          path: rel,
        });
      const room = await this.room(root, existing === undefined, existing?.size ?? 0);
      if (declaredLength !== undefined && declaredLength > room) throw this.tooLarge(room, declaredLength);
      await writeUpload({ root, rel, abs }, body, room, () => this.tooLarge(room)).catch((err) => {
        throw pathError(err);
      });
      const st = await fs.lstat(abs);
      return { file: { path: rel, size: st.size, modified_at: st.mtime.toISOString() }, created: !existing };
    } finally {
      await close();
    }
  }

  /** Deletes the file; a 404 for a missing file or a folder. */
  async remove(account: Account, session: string, name: string): Promise<void> {
    const { rel, abs, close } = await this.pin(account, session, name);
    try {
      const st = await fs.lstat(abs).catch((err) => {
        throw missing(err, rel) ?? pathError(err);
      });
      if (st.isDirectory()) throw new NotFoundError(`${JSON.stringify(rel)} is a folder, not a file`);
      await fs.unlink(abs).catch((err) => {
        throw missing(err, rel) ?? err;
      });
    } finally {
      await close();
    }
  }

  /** The bytes an upload may bring: the quota less every other file; a 413 when one more file is one too many. */
  private async room(root: string, newFile: boolean, replaced: number): Promise<number> {
    const { WORKSPACE_MAX_BYTES: maxBytes, WORKSPACE_MAX_FILES: maxFiles } = this.config;
    const usage = await workspaceUsage(root);
    if (newFile && usage.files + 1 > maxFiles)
      throw new PayloadTooLargeError(
        `the workspace holds ${usage.files} files, its limit (WORKSPACE_MAX_FILES: ${maxFiles}); delete some first`,
        { quota: 'files', limit: maxFiles, used: usage.files },
      );
    return Math.max(0, maxBytes - (usage.bytes - replaced));
  }

  private tooLarge(room: number, declared?: number): PayloadTooLargeError {
    const limit = this.config.WORKSPACE_MAX_BYTES;
    const used = limit - room;
    const what = declared === undefined ? `more than ${bytesText(room)}` : bytesText(declared);
    return new PayloadTooLargeError(
      `the upload (${what}) would take the workspace past its limit of ${bytesText(limit)} (WORKSPACE_MAX_BYTES): its other files hold ${bytesText(used)}`,
      { quota: 'bytes', limit, used },
    );
  }
}

const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

function missing(err: unknown, rel: string): NotFoundError | undefined {
  return isMissing(err) ? new NotFoundError(`no file ${JSON.stringify(rel)} in the workspace`) : undefined;
}

/** A path the workspace refuses, as the 400 (or, for a name the file system cannot hold, the 422) naming it. */
function pathError(err: unknown): unknown {
  if (err instanceof WorkspacePathError) return ValidationError.at(FILE_PATH_AT, err.message, 'invalid_path');
  if ((err as NodeJS.ErrnoException).code === 'ENAMETOOLONG')
    return UnprocessableRequestError.at(
      FILE_PATH_AT,
      'a name in the path is longer than the file system holds (255 bytes a name, in UTF-8, on most)',
      'name_too_long',
    );
  return err;
}

/**
 * The file opened is inside the workspace, by the descriptor's own path: a link swapped in
 * since the path was checked (the agent works in the same folder) would lead elsewhere. Where
 * the system has no /proc, the check made on the path stands.
 */
async function openedInside(fd: number, root: string, rel: string): Promise<void> {
  const real = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
  if (real === undefined) return;
  const realRoot = await fs.realpath(root).catch(() => root);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep))
    throw ValidationError.at(
      FILE_PATH_AT,
      `${JSON.stringify(rel)} goes through a link that leads out of the workspace`,
      'invalid_path',
    );
}
