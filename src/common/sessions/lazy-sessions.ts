// Sessions opened lazily. A run that names no session gets a new one, and most
// such sessions are never used again: opening a session workflow for each
// (a start, three workflow tasks, a watch of the run's close, two signals and,
// until it closes when idle, a place in the worker's cache) was most of a
// one-turn run's cost. So the gateway gives such a run a session id made from
// its task id (`task_<hex>` runs first in `sess_<hex>`), marks the run
// (TaskAdmission.lazySession, memo `lazySession`, search attribute
// TaskOpensSession) and opens nothing. The run holds the session's turn from
// its start and hands nothing over at its end; what it would have handed over
// stays readable from it (handoverQuery).
//
// The session opens when something uses it: a later run of it, a clear, a
// rejoin after a rewind. Opened while its first run is going, the session
// starts with that run holding the turn (SessionState.activeLazy) and reads
// its handover at its close; opened after, it starts with the handover as its
// thread. Reads that need no session workflow (its thread, whether it exists,
// its running run) read the first run instead, so a read never opens one.
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { sessionWorkflowId } from '../../../workflows/types';
import { type Handover, handoverQuery } from '../../../workflows/definitions';

/** The workflow type of the closed run a deleted lazily opened session leaves under its id (session-service.ts). */
export const DELETED_SESSION_TYPE = 'deletedSession';

const LAZY_ID = /^sess_([0-9a-f]{32})$/;

/** A new task and the session it runs first in, lazily opened: one random hex in both ids. */
export function oneOffIds(): { taskId: string; session: string } {
  const hex = randomUUID().replace(/-/g, '');
  return { taskId: `task_${hex}`, session: `sess_${hex}` };
}

/** The id of the run a lazily opened session began with, when `session` is such an id. */
export function firstRunId(session: string): string | undefined {
  const m = LAZY_ID.exec(session);
  return m ? `task_${m[1]}` : undefined;
}

/** What these rules read of a workflow (its latest run): undefined when Temporal has none of that id. */
export interface DescribedRun {
  type: string;
  /** Temporal's status name (RUNNING, COMPLETED, TERMINATED...). */
  status: string;
  memo: Record<string, unknown>;
  /** ISO 8601. */
  startTime: string;
}
export type Describe = (workflowId: string) => Promise<DescribedRun | undefined>;

/** Describe through a client. */
export function describeWith(client: Client): Describe {
  return async (workflowId) => {
    try {
      const d = await client.workflow.getHandle(workflowId).describe();
      const memo = (d.memo ?? {}) as Record<string, unknown>;
      return { type: d.type, status: d.status.name, memo, startTime: d.startTime.toISOString() };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  };
}

export interface LazyFirstRun {
  taskId: string;
  /** Its latest run is going (it holds the session's turn). */
  running: boolean;
  /** When the session was created (the run's createdAt). */
  createdAt: string;
}

const createdAtOf = (d: DescribedRun) => (typeof d.memo.createdAt === 'string' ? d.memo.createdAt : d.startTime);

/** The first run of the account's session `session` when that session was made lazily; undefined otherwise. */
export async function lazyFirstRun(
  describe: Describe,
  account: string,
  session: string,
): Promise<LazyFirstRun | undefined> {
  const taskId = firstRunId(session);
  const d = taskId ? await describe(taskId) : undefined;
  if (!taskId || !d) return undefined;
  if (d.memo.account !== account || d.memo.session !== session || d.memo.lazySession !== true) return undefined;
  return { taskId, running: d.status === 'RUNNING', createdAt: createdAtOf(d) };
}

export type SessionFound =
  { kind: 'workflow'; open: boolean; createdAt: string } | { kind: 'lazy'; first: LazyFirstRun };

/**
 * Whether the account has the session, and how: its workflow (open or closed when idle), or only
 * the first run of a session not opened yet. Undefined: no such session (or a deleted one).
 */
export async function findSession(
  describe: Describe,
  account: string,
  session: string,
): Promise<SessionFound | undefined> {
  const d = await describe(sessionWorkflowId(account, session));
  if (d)
    return d.type === DELETED_SESSION_TYPE
      ? undefined
      : { kind: 'workflow', open: d.status === 'RUNNING', createdAt: createdAtOf(d) };
  const first = await lazyFirstRun(describe, account, session);
  return first && { kind: 'lazy', first };
}

/** What the first run handed over (null: not ended yet, or ended from outside); nothing when it is gone. */
export async function handoverOf(client: Client, taskId: string): Promise<Handover | null> {
  try {
    return await client.workflow.getHandle(taskId).query(handoverQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
