// Standalone activities (StartActivityExecution and the calls around it), and
// the worker's responses to their tasks: an activity token that names no
// workflow, or a by-id call without a workflow id, is a standalone activity's,
// as on the real server; every other one goes on to the workflow handlers.
import type { Engine } from '../engine/engine';
import type { CallContext, Handler, Handlers } from './grpc-service';
import type { ActivityRun } from '../engine/activity-run';
import type { ActivityExecutions } from '../engine/activity-executions';
import { activityInfo, isRunning } from '../engine/activity-run';
import { parseActivityStart, startActivityRun } from '../engine/activity-start';
import {
  canceledActivityRun,
  completeActivityRun,
  failActivityRun,
  heartbeatActivityRun,
  requestCancelActivityRun,
  terminateActivityRun,
} from '../engine/activity-transitions';
import { activityExecutionVisibility } from './activity-execution-visibility';
import { invalidArgument, notFound } from '../errors';
import { decodeToken } from '../engine/task-token';
import { waitBudget } from './workflow-service';

const MAX_ID_LENGTH = 1000;
const TASK_NOT_FOUND = 'Activity task not found.';

function activityIdOf(req: any): string {
  const id: string = req.activityId ?? '';
  if (!id) throw invalidArgument('activity ID is required');
  if (id.length > MAX_ID_LENGTH)
    throw invalidArgument(`activity ID exceeds length limit. Length=${id.length} Limit=${MAX_ID_LENGTH}`);
  return id;
}

function target(reg: ActivityExecutions, req: any): ActivityRun {
  return reg.find(req.namespace, activityIdOf(req), req.runId || undefined);
}

/** A standalone activity's token, or undefined for a workflow activity's. */
function standaloneToken(token: Uint8Array | undefined) {
  const t = decodeToken(token, 'a');
  return t.w === '' && t.i ? t : undefined;
}

/** The running attempt a token names; a finished or later attempt is not found. */
function byToken(reg: ActivityExecutions, t: NonNullable<ReturnType<typeof standaloneToken>>): ActivityRun {
  const a = reg.runs.get(`${t.n}\u0000${t.i}\u0000${t.r}`);
  if (!a || !isRunning(a) || a.attempt !== t.a || a.startedTime === undefined) throw notFound(TASK_NOT_FOUND);
  return a;
}

/** The running run a by-id call names; only a completion may target an attempt no worker started. */
function byId(reg: ActivityExecutions, req: any, allowUnstarted = false): ActivityRun {
  if (!req.activityId) throw invalidArgument('ActivityId is not set on request.');
  const a = target(reg, req);
  if (!isRunning(a) || (a.startedTime === undefined && !allowUnstarted)) throw notFound(TASK_NOT_FOUND);
  return a;
}

// eslint-disable-next-line max-lines-per-function -- a table of the standalone-activity RPC handlers, one entry per method
export function activityExecutionHandlers(eng: Engine, reg: ActivityExecutions, base: Handlers): Handlers {
  const commit = async <T>(v: T): Promise<T> => {
    await eng.flush();
    return v;
  };
  /** Sends a call for a standalone activity to `own`, any other to the workflow handler. */
  const route = (name: string, isOwn: (req: any) => boolean, own: (req: any) => object): Handler => {
    const fallback = base[name];
    return (req, ctx) => (isOwn(req) ? commit(own(req)) : fallback(req, ctx));
  };
  const ownToken = (req: any) => !!standaloneToken(req.taskToken);
  const ownId = (req: any) => !req.workflowId;
  const task = (req: any) => byToken(reg, standaloneToken(req.taskToken)!);
  return {
    ...activityExecutionVisibility(eng, reg),
    startActivityExecution: (req) => {
      const { run, started } = startActivityRun(reg, parseActivityStart(eng, req));
      return commit({ runId: run.runId, started });
    },
    describeActivityExecution: (req) => {
      const a = target(reg, req);
      return {
        runId: a.runId,
        info: activityInfo(a, req),
        input: req.includeInput ? a.input : undefined,
        outcome: req.includeOutcome ? a.outcome : undefined,
      };
    },
    pollActivityExecution: async (req, ctx: CallContext) => {
      const a = target(reg, req);
      await reg.waitClosed(a, waitBudget(ctx, eng.historyWaitMs));
      // Still running when the wait ends: an empty answer, and the SDK asks again.
      return isRunning(a) ? {} : { runId: a.runId, outcome: a.outcome };
    },
    requestCancelActivityExecution: (req) => {
      requestCancelActivityRun(reg, target(reg, req), req);
      return commit({});
    },
    terminateActivityExecution: (req) => {
      terminateActivityRun(reg, target(reg, req), req);
      return commit({});
    },
    deleteActivityExecution: (req) => {
      reg.remove(target(reg, req));
      return commit({});
    },
    respondActivityTaskCompleted: route(
      'respondActivityTaskCompleted',
      ownToken,
      (req) => (completeActivityRun(reg, task(req), req.result), {}),
    ),
    respondActivityTaskFailed: route(
      'respondActivityTaskFailed',
      ownToken,
      (req) => (failActivityRun(reg, task(req), req.failure ?? {}, req.lastHeartbeatDetails), { failures: [] }),
    ),
    respondActivityTaskCanceled: route(
      'respondActivityTaskCanceled',
      ownToken,
      (req) => (canceledActivityRun(reg, task(req), req.details), {}),
    ),
    recordActivityTaskHeartbeat: route('recordActivityTaskHeartbeat', ownToken, (req) =>
      heartbeatActivityRun(reg, task(req), req.details),
    ),
    respondActivityTaskCompletedById: route(
      'respondActivityTaskCompletedById',
      ownId,
      (req) => (completeActivityRun(reg, byId(reg, req, true), req.result), {}),
    ),
    respondActivityTaskFailedById: route(
      'respondActivityTaskFailedById',
      ownId,
      (req) => (failActivityRun(reg, byId(reg, req), req.failure ?? {}, req.lastHeartbeatDetails), { failures: [] }),
    ),
    respondActivityTaskCanceledById: route(
      'respondActivityTaskCanceledById',
      ownId,
      (req) => (canceledActivityRun(reg, byId(reg, req), req.details), {}),
    ),
    recordActivityTaskHeartbeatById: route('recordActivityTaskHeartbeatById', ownId, (req) =>
      heartbeatActivityRun(reg, byId(reg, req), req.details),
    ),
  };
}
