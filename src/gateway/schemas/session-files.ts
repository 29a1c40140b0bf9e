// The session files API's request rules and answer shapes (routes/session-files.ts). A file's path
// is checked here, each rule with its own message, and the document states the same rules as one
// pattern (FILE_PATH): a path the pattern allows is never refused as malformed, so the contract
// test holds the two together. What no pattern can state (a link in the workspace that leads out,
// a name the file system finds too long) is checked on the workspace itself.
import { z } from 'zod';
import type { WorkspaceFile } from '../../common/workspaces/usage';
import { same } from './same-type';

/** The longest path, in characters (code points). */
export const FILE_PATH_MAX_CHARS = 1024;

/**
 * A file path as the document states it: not absolute, no `..` segment, some segment naming a
 * file (not only `.` and empty ones), no control characters, 1 to FILE_PATH_MAX_CHARS characters
 * (code points: the `u` flag, as JSON Schema counts); `/` and `\` both separate segments.
 * `[\s\S]` rather than `.`: the same meaning in ECMAScript and Python (schemathesis), line
 * separators included. The length is in the pattern, not a maxLength beside it: schemathesis made
 * strings of a pattern at a length's bounds by drawing and discarding, which cost its coverage
 * phase about 80 s of generation for these four operations (under 2 s this way).
 */
export const FILE_PATH = new RegExp(
  String.raw`^(?![/\\])(?!(?:[\s\S]*[/\\])?\.\.(?:[/\\]|$))(?=(?:[\s\S]*[/\\])?(?!\.?(?:[/\\]|$))[^/\\])` +
    String.raw`[^\x00-\x1f\x7f]{1,${FILE_PATH_MAX_CHARS}}$`,
  'u',
);

export interface PathProblem {
  message: string;
  code: string;
}

/** What is wrong with `raw` as a file path of a workspace (undefined: nothing FILE_PATH can see). */
export function filePathProblem(raw: string): PathProblem | undefined {
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
  if (!raw) return { message: 'the path is empty: name a file of the workspace', code: 'too_small' };
  if ([...raw].length > FILE_PATH_MAX_CHARS)
    return { message: `the path is longer than ${FILE_PATH_MAX_CHARS} characters`, code: 'too_big' };
  if (/[\x00-\x1f\x7f]/.test(raw))
    return { message: `${shown} contains a control character (NUL, a newline, ...)`, code: 'invalid_path' };
  if (/^[/\\]/.test(raw))
    return { message: `${shown} is absolute: name it relative to the workspace`, code: 'invalid_path' };
  const segments = raw.split(/[/\\]/);
  if (segments.includes('..'))
    return { message: `${shown} has a .. segment: paths stay inside the workspace`, code: 'invalid_path' };
  if (segments.every((s) => s === '' || s === '.'))
    return { message: `${shown} names the workspace itself: name a file in it`, code: 'invalid_path' };
  return undefined;
}

export const fileListQuerySchema = z.strictObject({
  prefix: z
    .string()
    .max(FILE_PATH_MAX_CHARS)
    .optional()
    .describe('Only the files whose path starts with this text (`src/` for a folder: its files at every depth).'),
});

export const workspaceFileSchema = z
  .object({
    path: z.string().describe('Relative to the workspace, `/` between folders, normalised (no `.` or empty segment).'),
    size: z.number().int().describe('Bytes.'),
    modified_at: z.string().describe('When it was last written, ISO 8601.'),
  })
  .describe("A file of the session's workspace.");
same<z.output<typeof workspaceFileSchema>, WorkspaceFile>(true);

export const workspaceFileListSchema = z
  .object({ files: z.array(workspaceFileSchema).describe('Every file (folders are not listed), sorted by path.') })
  .describe("The files of the session's workspace; empty while it has none (a new session).");
