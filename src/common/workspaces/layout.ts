// Where a session's workspace lives on the host. One folder per account, one per session in it;
// the names are the ids in base64url, because a session id may be `..` or `.` (SESSION_ID allows
// dots) and must never name a folder outside its account's. Each session has two folders:
// `files` (the agent's computer: mounted at /workspace in the sandbox, served by the files API)
// and `state` (the service's own notes about it: the shell's saved directory and variables, the
// editor's undo history, the calls started; never visible to the agent or the API).
import path from 'node:path';

export interface SessionWorkspace {
  /** The session's folder (deleting it deletes everything of the session's computer). */
  root: string;
  /** The agent's files: /workspace in the sandbox. */
  files: string;
  /** The service's notes about the workspace. */
  state: string;
}

const encode = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** The workspace of `session` of `account` under the deployment's workspace folder (config.workspaceDir). */
export function sessionWorkspace(workspacesDir: string, account: string, session: string): SessionWorkspace {
  const root = path.resolve(workspacesDir, encode(account), encode(session));
  return { root, files: path.join(root, 'files'), state: path.join(root, 'state') };
}
