// The session files routes of the OpenAPI document: a session's workspace (the files its agent's
// computer works in) listed, uploaded to, downloaded from, deleted from.
import { type Json, jsonBody, operation, queryParams, ref, toSchema } from './operations';
import {
  FILE_PATH,
  FILE_PATH_MAX_CHARS,
  fileListQuerySchema,
  workspaceFileListSchema,
  workspaceFileSchema,
} from '../schemas/session-files';

const sessionId = ref('parameters', 'SessionId');
const filePath = ref('parameters', 'FilePath');
const NOT_FOUND = "No such session for this account (another account's session is one).";
const QUOTA =
  'The workspace would pass its quota: WORKSPACE_MAX_BYTES (details.quota bytes: limit, and used by its other files) or WORKSPACE_MAX_FILES (details.quota files). The upload stops there and nothing is written.';

export function sessionFilePaths(): Json {
  return {
    '/sessions/{id}/files': {
      get: operation('get', {
        id: 'listSessionFiles',
        tag: 'files',
        summary: "List the files of a session's workspace",
        description:
          "Every file of the session's workspace (the agent's computer: what its bash, editor and search tools work in), at every depth, sorted by path; folders are not listed. A session with no workspace yet (no file ever written) lists none.",
        parameters: [sessionId, ...queryParams(fileListQuerySchema)],
        responses: { 200: { description: 'The files.', content: jsonBody('WorkspaceFileList') } },
        errors: { 400: 'A malformed session id, or an unknown or invalid query parameter.', 404: NOT_FOUND },
      }),
    },
    '/sessions/{id}/files/{path}': {
      put: uploadOperation(),
      get: downloadOperation(),
      delete: operation('delete', {
        id: 'deleteSessionFile',
        tag: 'files',
        summary: "Delete a file of a session's workspace",
        parameters: [sessionId, filePath],
        responses: { 204: { description: 'Deleted.' } },
        errors: {
          400: 'A malformed session id or file path, or a path through a link that leads out of the workspace.',
          404: 'No such session for this account, or no file at this path (a folder is not a file).',
          422: 'A name in the path longer than the file system holds.',
        },
      }),
    },
  };
}

function uploadOperation(): Json {
  const op = operation('put', {
    id: 'uploadSessionFile',
    tag: 'files',
    summary: "Write a file of a session's workspace (the body, as it is)",
    description:
      "The request body is the file's content, of any Content-Type (it is never parsed; none is an empty file); folders on the way are made. The file appears whole or not at all: the body goes to a temporary file beside it, renamed over it once complete, so a cut upload leaves nothing. The workspace's quota bounds an upload (not BODY_LIMIT_BYTES): a Content-Length past it is refused before anything is read, a body that grows past it as soon as it does.",
    parameters: [sessionId, filePath],
    responses: {
      201: { description: 'Created.', content: jsonBody('WorkspaceFile') },
      200: { description: 'Replaced an existing file.', content: jsonBody('WorkspaceFile') },
    },
    errors: {
      400: 'A malformed session id or file path, a path through a link that leads out of the workspace, or an upload cut before its end.',
      404: NOT_FOUND,
      409: 'A folder is at the path, or a file where one of its folders must be.',
      413: QUOTA,
      422: 'A name in the path longer than the file system holds.',
    },
  });
  // No body is an empty file, as a body of no bytes is: HTTP does not tell the two apart.
  op.requestBody = {
    required: false,
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  };
  return op;
}

function downloadOperation(): Json {
  return operation('get', {
    id: 'downloadSessionFile',
    tag: 'files',
    summary: "Download a file of a session's workspace",
    description:
      "The file's bytes. Content-Type comes from its extension (text/plain for .txt, image/png for .png, ...; application/octet-stream when unknown), with Content-Length and Content-Disposition: attachment (its name in filename and, UTF-8, filename*), and X-Content-Type-Options: nosniff.",
    parameters: [sessionId, filePath],
    responses: {
      200: {
        description: 'The file.',
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="..."; filename*=UTF-8\'\'... (RFC 6266).',
            schema: { type: 'string' },
          },
          'X-Content-Type-Options': { description: 'Always nosniff.', schema: { type: 'string', const: 'nosniff' } },
          'Last-Modified': { description: 'When the file was last written.', schema: { type: 'string' } },
        },
        content: { '*/*': {} },
      },
    },
    errors: {
      400: 'A malformed session id or file path, or a path through a link that leads out of the workspace.',
      404: 'No such session for this account, or no file at this path (a folder is not a file).',
      422: 'A name in the path longer than the file system holds.',
    },
  });
}

export function sessionFileSchemas(): Json {
  return {
    WorkspaceFile: toSchema(workspaceFileSchema),
    WorkspaceFileList: toSchema(workspaceFileListSchema),
  };
}

export function sessionFileParameters(): Json {
  return {
    FilePath: {
      name: 'path',
      in: 'path',
      required: true,
      description: `A file's path in the session's workspace, relative to it: folders separated by / (percent-encoded as %2F, or as plain path segments), at most ${FILE_PATH_MAX_CHARS} characters. Not absolute, no .. segment, no control characters; . and empty segments are dropped.`,
      schema: { type: 'string', pattern: FILE_PATH.source },
    },
  };
}
