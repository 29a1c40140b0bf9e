// ExecuteMultiOperation, which the real server serves for one combination only:
// update-with-start, [StartWorkflow, UpdateWorkflow] on one workflow id. The
// frontend's checks come first, each operation's problems reported in its own
// status of MultiOperationExecutionFailure (the others marked aborted).
import type { Engine } from '../engine/engine';
import type { Handler } from './grpc-service';
import type { Execution } from '../engine/state';
import type { RunParams } from '../engine/create-run';
import { ConflictPolicy, EventType, UpdateStage, WfStatus, msFromDur } from '../proto';
import {
  ABORTED_OPERATION,
  OperationError,
  RpcError,
  invalidArgument,
  multiOperationFailed,
  permissionDenied,
} from '../errors';
import { Policies, paramsFromRequest, resolvePolicies } from '../engine/start';
import { waitForStage } from '../engine/updates';
import { UpdateWithStartOutcome, updateWithStart } from '../engine/update-with-start';
import { isUuid } from './request-checks';
import { waitBudget } from './workflow-service';

const MAX_ID_LENGTH = 1000;

interface StartOp {
  params: RunParams;
  policies: Policies;
}

interface UpdateOp {
  request: any;
  waitStage: number;
  workflowId: string;
}

export function executeMultiOperationHandler(eng: Engine): Handler {
  return async (req, ctx) => {
    const ops = req.operations ?? [];
    if (ops.length !== 2 || !ops[0].startWorkflow || !ops[1].updateWorkflow)
      throw invalidArgument('Operations have to be exactly [Start, Update].');
    const start = operation(() => startOperation(eng, req.namespace, ops[0].startWorkflow));
    const update = operation(() => updateOperation(eng, req.namespace, ops[1].updateWorkflow));
    checkOperations(start, update);
    const { params, policies } = start as StartOp;
    const { request, waitStage } = update as UpdateOp;
    const outcome = updateWithStart(eng, params, policies, request);
    const status = outcome.start === 'completed' ? outcome.run.status : WfStatus.RUNNING;
    await eng.flush();
    await waitForStage(outcome.update, waitStage, waitBudget(ctx, 20_000));
    await eng.flush();
    return {
      responses: [
        { startWorkflow: startResponse({ ...outcome, status }) },
        { updateWorkflow: updateResponse(outcome) },
      ],
    };
  };
}

/** Runs one operation's checks: its parsed form, or the RpcError it failed with. */
function operation<T>(check: () => T): T | RpcError {
  try {
    return check();
  } catch (err) {
    if (err instanceof RpcError) return err;
    throw err;
  }
}

/** Both operations valid and on one workflow id, or the failure naming each one's status. */
function checkOperations(start: StartOp | RpcError, update: UpdateOp | RpcError): void {
  const errors: OperationError[] = [
    start instanceof RpcError ? start : ABORTED_OPERATION,
    update instanceof RpcError ? update : ABORTED_OPERATION,
  ];
  // Only operations that passed their own checks are compared, in order.
  if (!(start instanceof RpcError) && !(update instanceof RpcError) && start.params.workflowId !== update.workflowId) {
    errors[1] = invalidArgument('WorkflowId is not consistent with previous operation(s).');
  }
  if (errors.some((e) => e instanceof RpcError)) throw multiOperationFailed(errors);
}

function namespaceOf(opNamespace: string | undefined, namespace: string): string {
  if (opNamespace && opNamespace !== namespace)
    throw invalidArgument("Operation namespace did not match request's namespace.");
  return namespace;
}

/** The start's checks: StartWorkflowExecution's, then what update-with-start does not allow. */
function startOperation(eng: Engine, namespace: string, s: any): StartOp {
  const params = paramsFromRequest(eng, { ...s, namespace: namespaceOf(s.namespace, namespace) });
  const policies = resolvePolicies(s.workflowIdReusePolicy, s.workflowIdConflictPolicy, ConflictPolicy.FAIL);
  if (s.cronSchedule) throw invalidArgument('CronSchedule is not allowed.');
  if (s.requestEagerExecution) throw invalidArgument('RequestEagerExecution is not supported.');
  if (msFromDur(s.workflowStartDelay) > 0) throw invalidArgument('WorkflowStartDelay is not supported.');
  return { params, policies };
}

/** The update's checks: UpdateWorkflowExecution's, then no run ids (the start decides the run). */
function updateOperation(eng: Engine, namespace: string, u: any): UpdateOp {
  namespaceOf(u.namespace, namespace);
  const exec = u.workflowExecution;
  if (!exec) throw invalidArgument('Execution is not set on request.');
  if (!exec.workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (exec.runId && !isUuid(exec.runId)) throw invalidArgument('Invalid RunId.');
  const meta = u.request?.meta;
  if (!meta) throw invalidArgument('Update meta is not set on request.');
  if ((meta.updateId ?? '').length > MAX_ID_LENGTH) throw invalidArgument('UpdateId length exceeds limit.');
  if (!meta.updateId) meta.updateId = eng.newId();
  if (!u.request.input) throw invalidArgument('Update input is not set on request.');
  if (!u.request.input.name) throw invalidArgument('Update name is not set on request.');
  const waitStage = u.waitPolicy?.lifecycleStage || UpdateStage.ACCEPTED;
  if (waitStage === UpdateStage.ADMITTED)
    throw permissionDenied(
      'UpdateWorkflowExecution issued asynchronously and waiting on update admitted is not supported.',
    );
  if (u.firstExecutionRunId) throw invalidArgument('FirstExecutionRunId is not allowed.');
  if (exec.runId) throw invalidArgument('RunId is not allowed.');
  return { request: u.request, waitStage, workflowId: exec.workflowId };
}

function startedEventLink(e: Execution): object {
  return {
    workflowEvent: {
      namespace: e.namespace,
      workflowId: e.workflowId,
      runId: e.runId,
      eventRef: { eventId: 1, eventType: EventType.WORKFLOW_EXECUTION_STARTED },
    },
  };
}

/**
 * As the real server answers each way the start was resolved; the status is the
 * run's when the update reached it (running, unless it was found completed).
 */
function startResponse({ run, start, status }: UpdateWithStartOutcome & { status: number }): object {
  if (start === 'completed') return { runId: run.runId, status };
  if (start === 'reused') return { runId: run.runId, started: false, status, link: startedEventLink(run) };
  return { runId: run.runId, started: true, status, firstExecutionRunId: run.firstRunId, link: startedEventLink(run) };
}

function updateResponse({ run, update }: UpdateWithStartOutcome): object {
  return {
    updateRef: { workflowExecution: { workflowId: run.workflowId, runId: run.runId }, updateId: update.id },
    outcome: update.stage === UpdateStage.COMPLETED ? update.outcome : undefined,
    stage: update.stage,
  };
}
