// client.sessions: a session's conversation, and listing, creating and
// deleting sessions; `client.sessions.files`, the files of a session's workspace.
import type { HttpCore, RequestOptions } from './http';
import type {
  CreateSessionBody,
  ListSessionsQuery,
  SessionCreated,
  ForkSessionBody,
  SessionForked,
  SessionInfo,
  SessionList,
  SessionMessages,
} from './types';
import { eachItem } from './paging';
import { SessionFiles } from './session-files';

const sessionPath = (id: string, rest = '') => `/sessions/${encodeURIComponent(id)}${rest}`;

export class Sessions {
  /** The files of a session's workspace: upload, list, download, delete. */
  readonly files: SessionFiles;

  constructor(private readonly core: HttpCore) {
    this.files = new SessionFiles(core);
  }

  /** The conversation so far, oldest first. */
  messages(id: string, opts: RequestOptions = {}): Promise<SessionMessages> {
    return this.core.json('GET', sessionPath(id, '/messages'), opts);
  }

  /** Empties the conversation; later runs of the session start afresh. */
  async clearMessages(id: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', sessionPath(id, '/messages'), opts);
  }

  /** One page of the account's sessions; pass `next_cursor` back as `cursor`. */
  list(query: ListSessionsQuery = {}, opts: RequestOptions = {}): Promise<SessionList> {
    return this.core.json('GET', '/sessions', { ...opts, query: { ...query } });
  }

  /** Every session, fetching pages as the iteration goes. */
  listAll(query: Omit<ListSessionsQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncGenerator<SessionInfo> {
    return eachItem(async (cursor) => {
      const page = await this.list({ ...query, cursor }, opts);
      return { items: page.sessions, next_cursor: page.next_cursor };
    });
  }

  /** A new session, with an id of one's own choosing if given (a ConflictError if it is taken). */
  create(body: CreateSessionBody = {}, opts: RequestOptions = {}): Promise<SessionCreated> {
    return this.core.json('POST', '/sessions', { ...opts, body });
  }

  /**
   * A new session whose thread is this one's, or its first `at` messages; this one goes on
   * unchanged. A ConflictError if the new id given is taken.
   */
  fork(id: string, body: ForkSessionBody = {}, opts: RequestOptions = {}): Promise<SessionForked> {
    return this.core.json('POST', sessionPath(id, '/fork'), { ...opts, body });
  }

  /** Deletes a session, its conversation and its workspace's files; a ConflictError while one of its runs is active or queued. */
  async delete(id: string, opts: RequestOptions = {}): Promise<void> {
    await this.core.json('DELETE', sessionPath(id), opts);
  }
}
