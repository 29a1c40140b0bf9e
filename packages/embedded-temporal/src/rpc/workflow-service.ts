// WorkflowService handlers for clients: namespaces, start, signal, cancel,
// terminate, reset, delete, describe, history, query, update.
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import type { CallContext, Handlers } from './grpc-service';
import { HistoryFilter, UpdateStage, WfStatus, QueryRejectCondition, durFromMs, tsFromMs } from '../proto';
import { invalidArgument, invalidPageToken, workflowCompleted, failedPrecondition, workflowNotReady } from '../errors';
import { signalWithStart, startFromRequest } from '../engine/start';
import { signalRun, requestCancelRun } from '../engine/signals';
import { terminateRun } from '../engine/lifecycle';
import { deleteRun } from '../engine/delete-run';
import { queryRun } from '../engine/queries';
import { admitUpdate, findUpdate, waitForStage } from '../engine/updates';
import { describeExecution } from './describe';
import { transientSuffix } from '../engine/transient-task';
import { commitRun } from '../engine/history-limits';
import { executeMultiOperationHandler } from './multi-operation';
import { eagerWorkflowTask } from '../engine/eager-start';
import { resetWorkflow } from '../engine/reset';

const SERVER_VERSION = '1.29.1';

/** How long a request may wait server-side: the client's deadline minus a margin, capped. */
export function waitBudget(ctx: CallContext, cap: number): number {
  const byDeadline = ctx.deadline ? ctx.deadline - Date.now() - 500 : cap;
  return Math.max(0, Math.min(cap, byDeadline));
}

// eslint-disable-next-line max-lines-per-function -- a table of the client-facing RPC handlers, one entry per method of Temporal's WorkflowService
export function workflowHandlers(eng: Engine): Handlers {
  const commit = async <T>(v: T): Promise<T> => {
    await eng.flush();
    return v;
  };
  // A change to a run answers the history limits' error when it broke one (history-limits.ts).
  const commitTo = async <T>(e: Execution, v: T): Promise<T> => {
    await commitRun(eng, e);
    return v;
  };
  return {
    getSystemInfo: () => ({
      serverVersion: SERVER_VERSION,
      capabilities: {
        signalAndQueryHeader: true,
        internalErrorDifferentiation: true,
        activityFailureIncludeHeartbeat: true,
        supportsSchedules: true,
        encodedFailureAttributes: true,
        // As the real server says: SDKs then stamp tasks with their build id (recorded
        // by worker-versions.ts) instead of a binary checksum; routing by build stays uncovered.
        buildIdBasedVersioning: true,
        upsertMemo: true,
        eagerWorkflowStart: true,
        sdkMetadata: true,
        countGroupByExecutionStatus: true,
        nexus: false,
      },
    }),

    startWorkflowExecution: (req) => {
      const { run, started } = startFromRequest(eng, req);
      return commit({
        runId: run.runId,
        started,
        status: run.status,
        firstExecutionRunId: run.firstRunId,
        eagerWorkflowTask: eagerWorkflowTask(eng, run, req),
      });
    },

    signalWorkflowExecution: (req) => {
      if (!req.signalName) throw invalidArgument('SignalName is not set on request.');
      const e = eng.getRun(req.namespace, req.workflowExecution?.workflowId, req.workflowExecution?.runId || undefined);
      signalRun(eng, e, {
        signalName: req.signalName,
        input: req.input,
        identity: req.identity,
        header: req.header,
        requestId: req.requestId,
      });
      return commitTo(e, {});
    },

    signalWithStartWorkflowExecution: (req) => {
      const { run, started } = signalWithStart(eng, req);
      return commitTo(run, { runId: run.runId, started });
    },

    requestCancelWorkflowExecution: (req) => {
      const e = eng.getRun(req.namespace, req.workflowExecution?.workflowId, req.workflowExecution?.runId || undefined);
      if (req.firstExecutionRunId && e.firstRunId !== req.firstExecutionRunId) throw workflowCompleted();
      requestCancelRun(eng, e, { identity: req.identity, requestId: req.requestId, reason: req.reason });
      return commitTo(e, {});
    },

    terminateWorkflowExecution: (req) => {
      const e = eng.getRun(req.namespace, req.workflowExecution?.workflowId, req.workflowExecution?.runId || undefined);
      if (req.firstExecutionRunId && e.firstRunId !== req.firstExecutionRunId) throw workflowCompleted();
      if (!eng.isOpen(e)) throw workflowCompleted();
      terminateRun(eng, e, req.reason, req.details, req.identity);
      return commit({});
    },

    deleteWorkflowExecution: async (req) => {
      const e = eng.getRun(req.namespace, req.workflowExecution?.workflowId, req.workflowExecution?.runId || undefined);
      await deleteRun(eng, e, req.identity);
      return {};
    },

    describeWorkflowExecution: (req) => {
      const e = eng.getRun(req.namespace, req.execution?.workflowId, req.execution?.runId || undefined);
      return describeExecution(eng, e);
    },

    getWorkflowExecutionHistory: (req, ctx) => getHistory(eng, req, ctx),

    getWorkflowExecutionHistoryReverse: (req) => {
      const e = eng.getRun(req.namespace, req.execution?.workflowId, req.execution?.runId || undefined);
      const size = req.maximumPageSize || 1000;
      const end = req.nextPageToken?.length ? Number(Buffer.from(req.nextPageToken).toString()) : e.history.length;
      const start = Math.max(0, end - size);
      const events = e.history.slice(start, end).reverse();
      return { history: { events }, nextPageToken: start > 0 ? Buffer.from(String(start)) : undefined };
    },

    queryWorkflow: async (req, ctx) => {
      const e = eng.getRun(req.namespace, req.execution?.workflowId, req.execution?.runId || undefined);
      if (!req.query?.queryType) throw invalidArgument('QueryType is not set on request.');
      const cond = req.queryRejectCondition ?? 0;
      const open = eng.isOpen(e);
      if (
        (cond === QueryRejectCondition.NOT_OPEN && !open) ||
        (cond === QueryRejectCondition.NOT_COMPLETED_CLEANLY && !open && e.status !== WfStatus.COMPLETED)
      ) {
        return { queryRejected: { status: e.status } };
      }
      if (!open && !e.lastCompletedWftStartedEventId)
        throw workflowNotReady('Workflow execution closed before WorkflowTaskStarted event');
      if (open && e.wftAttempt >= 3)
        throw workflowNotReady('Unable to query workflow due to Workflow Task in failed state.');
      const budget = waitBudget(ctx, 60_000);
      // A run whose first workflow task waits out a start backoff (cron, retry, a continue-as-new
      // chain held to one run a second) can only be queried once that task runs: wait for it if it
      // comes within the call's deadline, as the real server does, else say so now.
      if (open && !e.wft && !e.lastCompletedWftStartedEventId && e.executionTime > eng.now() + budget) {
        throw workflowNotReady('Workflow task is not scheduled yet.');
      }
      return queryRun(eng, e, req.query, budget);
    },

    updateWorkflowExecution: async (req, ctx) => {
      const exec = req.workflowExecution ?? {};
      const e = eng.getRun(req.namespace, exec.workflowId, exec.runId || undefined);
      if (req.firstExecutionRunId && e.firstRunId !== req.firstExecutionRunId) throw workflowCompleted();
      if (eng.isOpen(e) && e.wftAttempt >= 3)
        throw workflowNotReady('Unable to perform workflow execution update due to Workflow Task in failed state.');
      const u = admitUpdate(eng, e, req.request);
      await commitRun(eng, e);
      const want = req.waitPolicy?.lifecycleStage || UpdateStage.ACCEPTED;
      if (want === UpdateStage.ADMITTED && u.stage < UpdateStage.ADMITTED)
        throw failedPrecondition('update not admitted');
      await waitForStage(u, want, waitBudget(ctx, 20_000));
      await eng.flush();
      return {
        updateRef: { workflowExecution: { workflowId: e.workflowId, runId: e.runId }, updateId: u.id },
        outcome: u.stage === UpdateStage.COMPLETED ? u.outcome : undefined,
        stage: u.stage,
      };
    },

    resetWorkflowExecution: (req) => {
      const run = resetWorkflow(eng, req);
      return commitTo(run, { runId: run.runId });
    },

    executeMultiOperation: executeMultiOperationHandler(eng),

    pollWorkflowExecutionUpdate: async (req, ctx) => {
      const ref = req.updateRef ?? {};
      const e = eng.getRun(req.namespace, ref.workflowExecution?.workflowId, ref.workflowExecution?.runId || undefined);
      const u = findUpdate(eng, e, ref.updateId);
      const want = req.waitPolicy?.lifecycleStage || UpdateStage.ACCEPTED;
      await waitForStage(u, want, waitBudget(ctx, 20_000));
      return {
        outcome: u.stage === UpdateStage.COMPLETED ? u.outcome : undefined,
        stage: u.stage,
        updateRef: { workflowExecution: { workflowId: e.workflowId, runId: e.runId }, updateId: u.id },
      };
    },
  };
}

interface PageToken {
  r: string;
  n: number;
}

function historyPageToken(b: Uint8Array | undefined): PageToken | undefined {
  if (!b?.length) return undefined;
  try {
    const t = JSON.parse(Buffer.from(b).toString());
    if (typeof t?.r === 'string' && Number.isInteger(t.n) && t.n >= 1) return t;
  } catch {
    // not one of ours
  }
  throw invalidPageToken();
}

async function getHistory(eng: Engine, req: any, ctx: CallContext): Promise<object> {
  const token = historyPageToken(req.nextPageToken);
  const e = eng.getRun(req.namespace, req.execution?.workflowId, token?.r ?? (req.execution?.runId || undefined));
  const closeOnly = req.historyEventFilterType === HistoryFilter.CLOSE_EVENT;
  const from = token?.n ?? 1;
  const pageSize = req.maximumPageSize > 0 ? req.maximumPageSize : 1000;
  const mkToken = (n: number) => Buffer.from(JSON.stringify({ r: e.runId, n }));
  if (req.waitNewEvent && eng.isOpen(e) && (closeOnly || from >= e.nextEventId)) {
    await waitForChange(eng, e, waitBudget(ctx, eng.historyWaitMs), closeOnly);
    if (eng.isOpen(e) && (closeOnly || from >= e.nextEventId))
      return { history: { events: [] }, nextPageToken: mkToken(from) };
  }
  if (closeOnly) {
    if (eng.isOpen(e)) return { history: { events: [] }, nextPageToken: mkToken(from) };
    // A closed run keeps its history packed, and its close event at hand.
    const packed = (e as { closeEvent?: object }).closeEvent;
    if (packed) return { history: { events: [packed] } };
    const all = e.history;
    return { history: { events: [all[all.length - 1]] } };
  }
  let events = e.history.slice(from - 1, from - 1 + pageSize);
  const next = from + events.length;
  const more = next < e.nextEventId || (req.waitNewEvent && eng.isOpen(e));
  // The last page of a run with a transient workflow task ends with that task's
  // unwritten events, as on the real server; its CLI and UI are spared them. The
  // page token still points past the written events only.
  if (events.length > 0 && next >= e.nextEventId && eng.isOpen(e) && !NO_TRANSIENT_EVENTS.has(ctx.clientName ?? '')) {
    events = events.concat(transientSuffix(e));
  }
  return { history: { events }, nextPageToken: more ? mkToken(next) : undefined };
}

const NO_TRANSIENT_EVENTS = new Set(['temporal-cli', 'temporal-ui']);

function waitForChange(eng: Engine, e: Execution, ms: number, untilClosed: boolean): Promise<void> {
  return new Promise((resolve) => {
    const side = eng.sideOf(e);
    const timer = setTimeout(() => {
      side.waiters.delete(wake);
      resolve();
    }, ms);
    const wake = () => {
      if (untilClosed && eng.isOpen(e)) {
        side.waiters.add(wake);
        return;
      }
      clearTimeout(timer);
      resolve();
    };
    side.waiters.add(wake);
  });
}

export { durFromMs, tsFromMs };
