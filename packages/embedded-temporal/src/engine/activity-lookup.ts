// The pending activity a worker's response or heartbeat names, by task token or by workflow and
// activity id, with the real server's errors when there is none (activities.ts then records what
// the call says happened to it).
import type { Engine } from './engine';
import type { ActivityInfo, Execution } from './state';
import { decodeToken, TaskToken } from './task-token';
import { notFound, workflowCompleted, invalidArgument } from '../errors';

const TASK_NOT_FOUND = 'invalid activityID or activity already timed out or invoking workflow is completed';

function resolveTask(eng: Engine, token: TaskToken): { e: Execution; info: ActivityInfo } {
  const e = eng.run(eng.key({ namespace: token.n, workflowId: token.w, runId: token.r } as Execution));
  if (!e) throw notFound('workflow execution not found');
  if (!eng.isOpen(e)) throw workflowCompleted();
  const info = e.activities[token.s ?? -1];
  if (!info || info.attempt !== token.a || info.startedTime === undefined) throw notFound(TASK_NOT_FOUND);
  return { e, info };
}

export function activityByToken(eng: Engine, tokenBytes: Uint8Array | undefined) {
  return resolveTask(eng, decodeToken(tokenBytes, 'a'));
}

/**
 * The pending activity named by workflow and activity id. Only a completion may
 * target an attempt that no worker has started (the server then fabricates the
 * started event); every other by-id call needs a running attempt.
 */
export function activityById(eng: Engine, req: any, allowUnstarted = false): { e: Execution; info: ActivityInfo } {
  if (!req.workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (!req.activityId) throw invalidArgument('ActivityId is not set on request.');
  const e = eng.getRun(req.namespace, req.workflowId, req.runId || undefined);
  if (!eng.isOpen(e)) throw workflowCompleted();
  const info = Object.values(e.activities).find((x) => x.activityId === req.activityId);
  if (!info)
    throw notFound(
      `cannot find pending activity with ActivityID ${req.activityId}, check workflow execution history for more details`,
    );
  if (info.startedTime === undefined && !allowUnstarted) throw notFound(TASK_NOT_FOUND);
  return { e, info };
}
