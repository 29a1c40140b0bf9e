// One upload into a workspace: the body streamed into a temporary file beside its target, then
// renamed over it, so a reader (or the agent) never sees half a file and a cut upload leaves
// nothing behind. The body is counted as it comes: past the room the workspace has left, the
// upload stops there, its temporary file is deleted, and the caller answers 413.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConflictError, ValidationError } from '../../common/errors';
import { WorkspacePathError } from '../../common/workspaces/paths';

/** The request body as the upload reads it: a stream, and whether it arrived whole (IncomingMessage.complete). */
export type UploadBody = Readable & { complete?: boolean };

export interface UploadTarget {
  /** The workspace's folder (the files folder), resolved. */
  root: string;
  /** The file's host path inside it. */
  abs: string;
  /** The workspace-relative path, for messages. */
  rel: string;
}

/**
 * Writes `body` to `target.abs`, parents made, replacing a file there. `tooLarge` is thrown once
 * more than `room` bytes came (nothing more is read into the file). Throws ConflictError when a
 * folder is where the file goes, or a file where a folder must be.
 */
export async function writeUpload(
  target: UploadTarget,
  body: UploadBody,
  room: number,
  tooLarge: () => Error,
): Promise<void> {
  const parent = path.dirname(target.abs);
  await fs.mkdir(parent, { recursive: true }).catch((err) => {
    throw conflictOf(err, target.rel) ?? err;
  });
  await insideRoot(target.root, parent, target.rel);
  const temp = path.join(parent, `.${path.basename(target.abs)}.${randomBytes(6).toString('hex')}.upload`);
  const file = await fs.open(temp, 'wx');
  try {
    await pipeline(upTo(body, room, tooLarge), file.createWriteStream());
    await fs.rename(temp, target.abs);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw conflictOf(err, target.rel) ?? err;
  } finally {
    await file.close().catch(() => undefined); // the write stream closes it; a failed open of the pipeline may not
  }
}

/**
 * The body's chunks until more than `room` bytes came. The body is not destroyed when the
 * upload stops (destroyOnReturn: false): destroying a request destroys its socket, and the 413
 * still has to be answered on it.
 */
async function* upTo(body: UploadBody, room: number, tooLarge: () => Error): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    seen += chunk.length;
    if (seen > room) throw tooLarge();
    yield chunk;
  }
  // A client that went away mid-body ends the stream early on some paths instead of failing it.
  if (body.complete === false)
    throw ValidationError.at('body', 'the upload was cut before its end; nothing was written', 'incomplete_body');
}

/** A link swapped in on the way since the path was checked (the agent works in the folder too) is refused. */
async function insideRoot(root: string, dir: string, rel: string): Promise<void> {
  const [real, realRoot] = await Promise.all([fs.realpath(dir), fs.realpath(root)]);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep))
    throw new WorkspacePathError(`${JSON.stringify(rel)} goes through a link that leads out of the workspace`);
}

/** A folder where the file goes (EISDIR), or a file where one of its folders must be (ENOTDIR, EEXIST). */
export function conflictOf(err: unknown, rel: string): ConflictError | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EISDIR')
    return new ConflictError(`${JSON.stringify(rel)} is a folder of the workspace; a file cannot replace it`, {
      path: rel,
    });
  if (code === 'ENOTDIR' || code === 'EEXIST')
    return new ConflictError(
      `a folder of ${JSON.stringify(rel)} is a file of the workspace; delete it first, or choose another path`,
      { path: rel },
    );
  return undefined;
}
