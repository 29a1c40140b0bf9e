// Queries. While a workflow task is pending the query rides on it (the poll
// response's `queries`); when the run is idle (or closed) it goes out as a legacy
// query task answered through RespondQueryTaskCompleted.
import type { Engine, PollResponse } from './engine';
import type { Execution } from './state';
import { QueryResultType, TaskQueueKind } from '../proto';
import { encodeToken, decodeToken } from './task-token';
import { deadlineExceeded, notFound, queryFailed } from '../errors';
import { liveStickyQueue } from './workflow-tasks';
import { oversizedQueryAnswer } from './payload-checks';

export interface PendingQuery {
  id: string;
  query: { queryType: string; queryArgs?: object; header?: object };
  attachedTo?: number;
  legacy?: boolean;
  /** A legacy query sent to the sticky queue (partial history) rather than the normal one (all of it). */
  sticky?: boolean;
  resolve(result: object): void;
  reject(err: Error): void;
}

export function queryRun(eng: Engine, e: Execution, query: PendingQuery['query'], timeoutMs: number): Promise<object> {
  const side = eng.sideOf(e);
  const id = eng.newId();
  return new Promise<object>((resolve, reject) => {
    const lockName = `query:${id}`;
    const done = () => {
      clearTimeout(timer);
      side.queries.delete(id);
      eng.release(e, lockName);
    };
    const timer = setTimeout(() => {
      done();
      reject(deadlineExceeded('query timed out waiting for a worker'));
    }, timeoutMs);
    const q: PendingQuery = {
      id,
      query,
      resolve: (r) => {
        done();
        resolve(r);
      },
      reject: (err) => {
        done();
        reject(err);
      },
    };
    side.queries.set(id, q);
    eng.hold(e, lockName);
    // A run that never completed a workflow task has nothing a worker could replay a
    // query on: the query rides on its first task (queryWorkflow checked it comes in time).
    const firstTaskPending = eng.isOpen(e) && !e.lastCompletedWftStartedEventId;
    if (!firstTaskPending && (!e.wft || !eng.isOpen(e))) dispatchLegacy(eng, e, q);
  });
}

function dispatchLegacy(eng: Engine, e: Execution, q: PendingQuery): void {
  q.legacy = true;
  // Like a workflow task: a sticky queue whose worker is gone (a restarted worker, or
  // this engine restarted since) would hold the query until it timed out.
  const sticky = liveStickyQueue(eng, e);
  q.sticky = sticky !== undefined;
  const queue = sticky ?? e.taskQueue;
  const task = { t: 'query' as const, key: eng.key(e), queryId: q.id };
  queueMicrotask(() => eng.matching.add(e.namespace, 'workflow', queue, task));
}

export function dispatchQueryTask(eng: Engine, key: string, queryId: string): PollResponse | undefined {
  const e = eng.byKey(key);
  const q = e ? eng.side.get(key)?.queries.get(queryId) : undefined;
  if (!e || !q || !q.legacy) return undefined;
  const sticky = !!q.sticky && !!e.sticky && eng.isOpen(e);
  // On the sticky queue the worker answers from the run it holds, so the task carries no events
  // (as the real server's): events newer than the last completed task belong to the workflow task
  // they scheduled, and a worker given them here too applied them for the query and then left that
  // workflow task unanswered until its timeout (a wedge seen in the SDK's core).
  const events = sticky ? [] : e.history;
  return {
    taskToken: encodeToken({ n: e.namespace, w: e.workflowId, r: e.runId, k: 'q', q: queryId }),
    workflowExecution: { workflowId: e.workflowId, runId: e.runId },
    workflowType: { name: e.workflowType },
    previousStartedEventId: e.lastCompletedWftStartedEventId,
    startedEventId: e.lastCompletedWftStartedEventId,
    history: { events },
    query: q.query,
    workflowExecutionTaskQueue: { name: e.taskQueue, kind: TaskQueueKind.NORMAL },
  };
}

export function respondQueryTask(eng: Engine, req: any): void {
  const t = decodeToken(req.taskToken, 'q');
  const key = eng.key({ namespace: t.n, workflowId: t.w, runId: t.r } as Execution);
  const q = eng.side.get(key)?.queries.get(t.q ?? '');
  if (!q) throw notFound('query task not found, or already expired');
  // Past the blob limit the frontend turns the answer into a failure with its own words.
  const e = eng.byKey(key);
  const tooLarge =
    e && req.completedType === QueryResultType.ANSWERED
      ? oversizedQueryAnswer(eng, e, req.queryResult, 'RespondQueryTaskCompleted')
      : undefined;
  if (tooLarge) settle(q, QueryResultType.FAILED, undefined, tooLarge.message);
  else settle(q, req.completedType, req.queryResult, req.errorMessage, req.failure);
}

function settle(
  q: PendingQuery,
  type: number,
  result: object | undefined,
  errorMessage?: string,
  failure?: object,
): void {
  if (type === QueryResultType.ANSWERED) q.resolve({ queryResult: result });
  else q.reject(queryFailed(errorMessage || 'query failed', failure));
}

/** Queries not yet sent ride on the workflow task being dispatched. */
export function attachQueries(eng: Engine, e: Execution, scheduledEventId: number): Record<string, object> | undefined {
  const side = eng.side.get(eng.key(e));
  if (!side || side.queries.size === 0) return undefined;
  const out: Record<string, object> = {};
  for (const q of side.queries.values()) {
    if (q.legacy || q.attachedTo !== undefined) continue;
    q.attachedTo = scheduledEventId;
    out[q.id] = q.query;
  }
  return Object.keys(out).length ? out : undefined;
}

export function answerQueries(eng: Engine, e: Execution, scheduledEventId: number, results: Record<string, any>): void {
  const side = eng.side.get(eng.key(e));
  if (!side) return;
  for (const q of [...side.queries.values()]) {
    if (q.attachedTo !== scheduledEventId) continue;
    const r = results[q.id];
    // An answer past the blob limit fails the query with the bare error (not a query failure).
    const tooLarge =
      r?.resultType === QueryResultType.ANSWERED
        ? oversizedQueryAnswer(eng, e, r.answer, 'ConsistentQuery')
        : undefined;
    if (tooLarge) q.reject(tooLarge);
    else if (r) settle(q, r.resultType, r.answer, r.errorMessage, r.failure);
    else q.attachedTo = undefined; // not answered: try again with the next task
  }
}

/** The task carrying these queries failed: they go out again. */
export function failAttachedQueries(eng: Engine, e: Execution, scheduledEventId: number): void {
  const side = eng.side.get(eng.key(e));
  side?.queries.forEach((q) => {
    if (q.attachedTo === scheduledEventId) q.attachedTo = undefined;
  });
}

/** No workflow task follows: queries still waiting go out as legacy query tasks. */
export function dispatchQueuedQueries(eng: Engine, e: Execution): void {
  const side = eng.side.get(eng.key(e));
  side?.queries.forEach((q) => {
    if (!q.legacy && q.attachedTo === undefined) dispatchLegacy(eng, e, q);
  });
}
