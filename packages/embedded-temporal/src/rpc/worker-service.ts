// WorkflowService handlers for workers: task polls and their responses,
// heartbeats, and worker shutdown (sticky queue release).
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import { waitBudget } from './workflow-service';
import { invalidArgument } from '../errors';
import {
  completeWorkflowTask,
  failWorkflowTask,
  resetStickyQueue,
  expediteShutDownWorkerTasks,
} from '../engine/workflow-tasks';
import { respondQueryTask } from '../engine/queries';
import { notePoller } from '../engine/worker-versions';
import { activityById, activityByToken } from '../engine/activity-lookup';
import type { PollResponse } from '../engine/engine';
import { execKey, type Execution } from '../engine/state';
import { decodeToken } from '../engine/task-token';
import { commitRun, terminatedByLimit } from '../engine/history-limits';
import {
  limitFailure,
  reportActivityCanceled,
  reportActivityCompleted,
  reportActivityFailed,
  reportHeartbeat,
} from '../engine/payload-checks';

// eslint-disable-next-line max-lines-per-function -- a table of the worker-facing RPC handlers, one entry per method of Temporal's WorkflowService
export function workerHandlers(eng: Engine): Handlers {
  const commit = async <T>(v: T): Promise<T> => {
    await eng.flush();
    return v;
  };
  const commitTo = async <T>(e: Execution | undefined, v: T): Promise<T> => {
    await commitRun(eng, e);
    return v;
  };
  const runOfTask = (token: Uint8Array | undefined) => {
    const t = decodeToken(token, 'w');
    return eng.byKey(execKey(t.n, t.w, t.r));
  };
  // A task handed out in a change that a history limit took back is no task (history-limits.ts);
  // a query task for the terminated run still goes out.
  const handOut = (namespace: string, res: PollResponse | undefined): PollResponse => {
    const x = res?.workflowExecution;
    if (!res || res.query || !x) return res ?? {};
    return terminatedByLimit(eng.byKey(execKey(namespace, x.workflowId, x.runId))) ? {} : res;
  };
  return {
    pollWorkflowTaskQueue: async (req, ctx) => {
      eng.namespace(req.namespace);
      if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
      notePoller(eng, req);
      const res = await eng.matching.poll(
        req.namespace,
        'workflow',
        req.taskQueue.name,
        req.identity ?? '',
        waitBudget(ctx, eng.pollTimeoutMs),
        ctx.cancelled,
        req.workerInstanceKey || undefined,
      );
      await eng.flush();
      return handOut(req.namespace, res);
    },
    respondWorkflowTaskCompleted: async (req) => {
      const run = runOfTask(req.taskToken);
      const { newTask, activityTasks, error } = completeWorkflowTask(eng, req);
      await commitRun(eng, run);
      if (error) throw error;
      return { workflowTask: newTask, activityTasks };
    },
    respondWorkflowTaskFailed: (req) => {
      const run = runOfTask(req.taskToken);
      if (run && req.failure) req.failure = limitFailure(eng, run, req.failure, 'RespondWorkflowTaskFailed');
      failWorkflowTask(eng, req);
      return commitTo(run, {});
    },
    respondQueryTaskCompleted: (req) => {
      respondQueryTask(eng, req);
      return {};
    },
    pollActivityTaskQueue: async (req, ctx) => {
      eng.namespace(req.namespace);
      if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
      notePoller(eng, req);
      const res = await eng.matching.poll(
        req.namespace,
        'activity',
        req.taskQueue.name,
        req.identity ?? '',
        waitBudget(ctx, eng.pollTimeoutMs),
        ctx.cancelled,
        req.workerInstanceKey || undefined,
      );
      await eng.flush();
      return handOut(req.namespace, res);
    },
    // Each report has the worker's payloads checked against the blob limit first
    // (payload-checks.ts), then is committed with the history limits (history-limits.ts).
    respondActivityTaskCompleted: (req) => {
      const r = { ...activityByToken(eng, req.taskToken), req, operation: 'RespondActivityTaskCompleted' };
      reportActivityCompleted(eng, r);
      return commitTo(r.e, {});
    },
    respondActivityTaskCompletedById: (req) => {
      const r = { ...activityById(eng, req, true), req, operation: 'RespondActivityTaskCompletedById' };
      reportActivityCompleted(eng, r);
      return commitTo(r.e, {});
    },
    respondActivityTaskFailed: (req) => {
      const r = { ...activityByToken(eng, req.taskToken), req, operation: 'RespondActivityTaskFailed' };
      return commitTo(r.e, reportActivityFailed(eng, r));
    },
    respondActivityTaskFailedById: (req) => {
      const r = { ...activityById(eng, req), req, operation: 'RespondActivityTaskFailedById' };
      return commitTo(r.e, reportActivityFailed(eng, r));
    },
    respondActivityTaskCanceled: (req) => {
      const r = { ...activityByToken(eng, req.taskToken), req, operation: 'RespondActivityTaskCanceled' };
      reportActivityCanceled(eng, r);
      return commitTo(r.e, {});
    },
    respondActivityTaskCanceledById: (req) => {
      const r = { ...activityById(eng, req), req, operation: 'RespondActivityTaskCanceledById' };
      reportActivityCanceled(eng, r);
      return commitTo(r.e, {});
    },
    recordActivityTaskHeartbeat: (req) => {
      const r = { ...activityByToken(eng, req.taskToken), req, operation: 'RecordActivityTaskHeartbeat' };
      return commitTo(r.e, reportHeartbeat(eng, r));
    },
    recordActivityTaskHeartbeatById: (req) => {
      const r = { ...activityById(eng, req), req, operation: 'RecordActivityTaskHeartbeatById' };
      return commitTo(r.e, reportHeartbeat(eng, r));
    },
    shutdownWorker: (req) => {
      eng.namespace(req.namespace);
      if (req.stickyTaskQueue) resetStickyQueue(eng, req.namespace, req.stickyTaskQueue);
      if (req.workerInstanceKey) eng.matching.shutdownWorker(req.workerInstanceKey);
      if (req.identity) expediteShutDownWorkerTasks(eng, req.namespace, req.identity);
      return commit({});
    },
    describeTaskQueue: (req) => {
      eng.namespace(req.namespace);
      const kind = req.taskQueueType === 2 ? 'activity' : 'workflow';
      const d = eng.matching.describe(req.namespace, kind, req.taskQueue?.name ?? '');
      const { tsFromMs } = require('../proto');
      return {
        pollers: d ? [{ lastAccessTime: tsFromMs(d.lastPollTime), identity: d.identity, ratePerSecond: 100000 }] : [],
      };
    },
  };
}
