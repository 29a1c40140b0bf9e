// The sessions API over Temporal: a session is the workflow `session:<account>:<id>`
// (workflows/session.ts), with every run it ever had. Creating one starts that
// workflow; deleting one removes all its runs with Temporal's DeleteWorkflowExecution
// (which terminates an open run first), so its thread is gone and its id free again
// at once, even where Temporal removes closed runs only later (see delete()).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { workspaceDir, type Config } from '../../common/config';
import type { Account } from '../../common/accounts/registry';
import { ConflictError, DependencyUnavailableError, NotFoundError } from '../../common/errors';
import { sessionWorkflowId, type ThreadMessage } from '../../../workflows/types';
import { sessionRef, sessionStart, sessionStartMeta } from '../../common/sessions/session-signals';
import {
  DELETED_SESSION_TYPE,
  describeWith,
  findSession,
  firstRunId,
  lazyFirstRun,
  type SessionFound,
} from '../../common/sessions/lazy-sessions';
import { temporalCall } from './temporal-errors';
import { listSessions, SessionListQuery, SessionPage } from './session-list';
import { listRuns, quote } from './visibility';
import { busyQuery, reserveUpdate } from '../../../workflows/definitions';
import { sessionWorkspace } from '../../common/workspaces/layout';

export interface SessionCreated {
  session: string;
  created_at: string;
}

/** The hold a delete takes on an idle session (reserveUpdate), so a multitask "reject" run cannot slip in. */
const DELETE_HOLD = 'session-delete';
/** How long a delete waits for Temporal to have removed the session (the real server deletes in a task of its own). */
const DELETE_SETTLE_MS = 10_000;

export class SessionService {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly config: Pick<
      Config,
      | 'TEMPORAL_NAMESPACE'
      | 'TEMPORAL_TASK_QUEUE'
      | 'SESSION_IDLE_CLOSE_MS'
      | 'RUN_WATCH_MS'
      | 'WORKSPACE_DIR'
      | 'DATA_DIR'
    >,
  ) {}

  private deadline<T>(ms: number, fn: () => Promise<T>, notFound?: string): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + ms, fn), notFound);
  }

  list(account: Account, q: SessionListQuery): Promise<SessionPage> {
    return temporalCall(() => listSessions(this.client, this.config.TEMPORAL_NAMESPACE, account.account, q));
  }

  /** A new session, empty or with `messages` as its thread; 409 when the id is taken (by a session open or closed). */
  async create(account: Account, id?: string, messages: ThreadMessage[] = []): Promise<SessionCreated> {
    const session = id ?? `sess_${randomUUID().replace(/-/g, '')}`;
    // A session made lazily by a run has no workflow until it is used, but it exists.
    if (id && (await this.lazyRun(account, id)))
      throw new ConflictError(`session ${session} already exists`, { session });
    const ref = sessionRef(this.config, account.account, session);
    const createdAt = new Date().toISOString();
    try {
      await this.deadline(5000, () =>
        this.client.workflow.start('agentSession', {
          workflowId: sessionWorkflowId(account.account, session),
          taskQueue: this.config.TEMPORAL_TASK_QUEUE,
          args: [sessionStart(ref, messages)],
          ...sessionStartMeta(ref, createdAt),
          // A closed session still holds its id (its next run reopens it with its thread).
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }),
      );
    } catch (err) {
      if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError')
        throw new ConflictError(`session ${session} already exists`, { session });
      throw err;
    }
    return { session, created_at: createdAt };
  }

  /**
   * Resolves when the account has the session (open or closed), else a 404: the rule of every
   * route under /sessions/{id}, another account's session being one it does not have.
   */
  async require(account: Account, session: string): Promise<void> {
    await this.found(account, session);
  }

  private lazyRun(account: Account, session: string) {
    return this.deadline(5000, () => lazyFirstRun(describeWith(this.client), account.account, session));
  }

  private async found(account: Account, session: string): Promise<SessionFound> {
    const found = await this.deadline(5000, () => findSession(describeWith(this.client), account.account, session));
    if (!found) throw new NotFoundError(`session ${session} not found`);
    return found;
  }

  /**
   * Deletes the session, its thread and its workspace (the files of its computer); 404 when
   * unknown, 409 while a run is active or queued in it. The workspace goes last, once the
   * session is gone: a refused delete (409) leaves the files, and a new session of the same
   * id starts with none.
   */
  async delete(account: Account, session: string): Promise<void> {
    const found = await this.found(account, session);
    if (found.kind === 'lazy' && found.first.running) throw busySession(session, found.first.taskId, []);
    if (found.kind === 'workflow') await this.deleteRuns(account, session);
    // A session made lazily would be found again by its first run: a closed run of its id says it was deleted.
    const madeLazily =
      found.kind === 'lazy' ||
      (firstRunId(session) !== undefined && (await this.lazyRun(account, session)) !== undefined);
    if (madeLazily) await this.markDeleted(sessionWorkflowId(account.account, session));
    const { root } = sessionWorkspace(workspaceDir(this.config), account.account, session);
    await fs.rm(root, { recursive: true, force: true });
  }

  /** Leaves a closed placeholder run (never executed) as the id's current run: findSession reads it as deleted. */
  private async markDeleted(workflowId: string): Promise<void> {
    const handle = await this.placeholder(workflowId);
    await this.deadline(5000, () => handle.terminate('session deleted'));
  }

  private async deleteRuns(account: Account, session: string, retried = false): Promise<void> {
    const workflowId = sessionWorkflowId(account.account, session);
    const handle = this.client.workflow.getHandle(workflowId);
    const desc = await this.deadline(5000, () => handle.describe(), `session ${session} not found`);
    let current = desc.runId;
    if (desc.status.name === 'RUNNING') {
      await this.holdIdle(handle, session);
      // An open run is terminated and deleted at once, by both engines.
      await this.deleteRun(workflowId, current);
    } else {
      // A closed run is deleted by the real server only a while later (about 30 s: its
      // queues' ack levels must pass the close first), and until then it would still be the
      // id's current run: readable, reopened by the next run, its id taken. Deleting a run
      // that supersedes it clears the id at once (Temporal does not make an earlier run
      // current again); the closed runs go in the background.
      try {
        current = await this.supersede(workflowId);
      } catch (err) {
        if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
        if (retried) throw new ConflictError('the session was reopened meanwhile; retry', { session }, true);
        return this.deleteRuns(account, session, true); // reopened since the describe: delete the open run
      }
      await this.deleteRun(workflowId, current);
      await this.deleteRun(workflowId, desc.runId);
    }
    await this.deleteEarlierRuns(workflowId, [current, desc.runId]);
    await this.settle(handle, current);
  }

  /** Starts a placeholder run of the id (no worker takes it: nothing runs) that the delete removes while it is open. */
  private async supersede(workflowId: string): Promise<string> {
    return (await this.placeholder(workflowId)).firstExecutionRunId;
  }

  /** A run of the id that no worker takes (nothing runs), never a session (findSession reads its type as deleted). */
  private placeholder(workflowId: string) {
    return this.deadline(5000, () =>
      this.client.workflow.start(DELETED_SESSION_TYPE, {
        workflowId,
        taskQueue: `${this.config.TEMPORAL_TASK_QUEUE}:deleted-sessions`,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        // Should what follows its start fail, it still ends by itself (timed out: no thread, no session).
        workflowExecutionTimeout: '1 minute',
      }),
    );
  }

  /** Holds an open session for the delete, or refuses (409) while a run is active or queued in it. */
  private async holdIdle(handle: WorkflowHandle, session: string): Promise<void> {
    try {
      await this.deadline(10_000, () =>
        handle.executeUpdate(reserveUpdate, { args: [{ taskId: DELETE_HOLD, reject: true }] }),
      );
    } catch (err) {
      if (err instanceof NotFoundError) return; // closed meanwhile: idle
      if ((err as Error).name !== 'WorkflowUpdateFailedError') throw err;
      const busy = await this.deadline(5000, () => handle.query(busyQuery)).catch(() => undefined);
      throw busySession(session, busy?.active, busy?.queued);
    }
  }

  private async deleteRun(workflowId: string, runId: string): Promise<void> {
    const namespace = this.config.TEMPORAL_NAMESPACE;
    try {
      await this.deadline(10_000, () =>
        this.client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } }),
      );
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err; // already gone
    }
  }

  /** The session's other runs (closed when idle and reopened, continued as new), as visibility knows them. */
  private async deleteEarlierRuns(workflowId: string, done: string[]): Promise<void> {
    const where = `WorkflowId = ${quote(workflowId)}`;
    let token: Uint8Array | undefined;
    do {
      const page = await temporalCall(() => listRuns(this.client, this.config.TEMPORAL_NAMESPACE, where, 1000, token));
      const runIds = page.runs.map((r) => r.execution?.runId ?? '').filter((id) => id && !done.includes(id));
      for (const runId of runIds) await this.deleteRun(workflowId, runId);
      token = page.next;
    } while (token);
  }

  /**
   * Waits until Temporal no longer has the deleted open run as the id's current one: the
   * real server deletes it in a task just after the call. A new run of the id (a new
   * session) ends the wait too.
   */
  private async settle(handle: WorkflowHandle, deleted: string): Promise<void> {
    const until = Date.now() + DELETE_SETTLE_MS;
    for (;;) {
      try {
        const d = await this.deadline(5000, () => handle.describe());
        if (d.runId !== deleted) return;
      } catch (err) {
        if (err instanceof NotFoundError) return;
        throw err;
      }
      if (Date.now() > until)
        throw new DependencyUnavailableError(
          'temporal',
          'Temporal has not finished deleting the session yet; retry shortly',
          1,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function busySession(session: string, active?: string | null, queued?: string[]): ConflictError {
  return new ConflictError(
    'the session has a run active or queued; cancel it or wait for it to finish, then delete the session',
    { session, ...(queued && { active: active ?? null, queued }) },
  );
}
