// WorkflowService handlers for workers: task polls and their responses,
// heartbeats, and worker shutdown (sticky queue release).
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import { waitBudget } from './workflow-service';
import { invalidArgument } from '../errors';
import { completeWorkflowTask, failWorkflowTask, resetStickyQueue } from '../engine/workflow-tasks';
import { respondQueryTask } from '../engine/queries';
import { activityById, activityByToken, canceledActivity, completeActivity, failActivity, heartbeatActivity } from '../engine/activities';

export function workerHandlers(eng: Engine): Handlers {
  const commit = async <T>(v: T): Promise<T> => {
    await eng.flush();
    return v;
  };
  return {
    pollWorkflowTaskQueue: async (req, ctx) => {
      eng.namespace(req.namespace);
      if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
      const res = await eng.matching.poll(req.namespace, 'workflow', req.taskQueue.name, req.identity ?? '', waitBudget(ctx, eng.pollTimeoutMs), ctx.cancelled);
      await eng.flush();
      return res ?? {};
    },
    respondWorkflowTaskCompleted: async (req) => {
      const { newTask, activityTasks, error } = completeWorkflowTask(eng, req);
      await eng.flush();
      if (error) throw error;
      return { workflowTask: newTask, activityTasks };
    },
    respondWorkflowTaskFailed: (req) => {
      failWorkflowTask(eng, req);
      return commit({});
    },
    respondQueryTaskCompleted: (req) => {
      respondQueryTask(eng, req);
      return {};
    },
    pollActivityTaskQueue: async (req, ctx) => {
      eng.namespace(req.namespace);
      if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
      const res = await eng.matching.poll(req.namespace, 'activity', req.taskQueue.name, req.identity ?? '', waitBudget(ctx, eng.pollTimeoutMs), ctx.cancelled);
      await eng.flush();
      return res ?? {};
    },
    respondActivityTaskCompleted: (req) => {
      const { e, info } = activityByToken(eng, req.taskToken);
      completeActivity(eng, e, info, req.result, req.identity);
      return commit({});
    },
    respondActivityTaskCompletedById: (req) => {
      const { e, info } = activityById(eng, req, true);
      completeActivity(eng, e, info, req.result, req.identity);
      return commit({});
    },
    respondActivityTaskFailed: (req) => {
      const { e, info } = activityByToken(eng, req.taskToken);
      failActivity(eng, e, info, req.failure ?? {}, req.lastHeartbeatDetails, req.identity);
      return commit({ failures: [] });
    },
    respondActivityTaskFailedById: (req) => {
      const { e, info } = activityById(eng, req);
      failActivity(eng, e, info, req.failure ?? {}, req.lastHeartbeatDetails, req.identity);
      return commit({ failures: [] });
    },
    respondActivityTaskCanceled: (req) => {
      const { e, info } = activityByToken(eng, req.taskToken);
      canceledActivity(eng, e, info, req.details, req.identity);
      return commit({});
    },
    respondActivityTaskCanceledById: (req) => {
      const { e, info } = activityById(eng, req);
      canceledActivity(eng, e, info, req.details, req.identity);
      return commit({});
    },
    recordActivityTaskHeartbeat: (req) => {
      const { e, info } = activityByToken(eng, req.taskToken);
      return commit(heartbeatActivity(eng, e, info, req.details));
    },
    recordActivityTaskHeartbeatById: (req) => {
      const { e, info } = activityById(eng, req);
      return commit(heartbeatActivity(eng, e, info, req.details));
    },
    shutdownWorker: (req) => {
      eng.namespace(req.namespace);
      if (req.stickyTaskQueue) resetStickyQueue(eng, req.namespace, req.stickyTaskQueue);
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
