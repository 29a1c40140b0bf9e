// The blob limit on what clients and workers send, applied where the real server
// applies it: a start, signal or query past `limit.blobSize.error` is refused with
// INVALID_ARGUMENT "Blob data size exceeds limit." (a memo past
// `limit.memoSize.error`: "Memo size exceeds limit."); what a worker reports about a
// task it ran cannot be refused, so it is turned into a failure the server makes up:
// an oversized activity result, heartbeat or cancel fails the activity (non-retryable),
// an oversized failure is replaced by one that keeps a cut-down copy as its cause, an
// oversized query answer fails the query.
import type { Engine } from './engine';
import type { ActivityInfo, Execution, Failure, Payloads } from './state';
import { canceledActivity, completeActivity, failActivity, heartbeatActivity } from './activities';
import { RpcError, invalidArgument } from '../errors';
import {
  BLOB_TOO_LARGE,
  CANCEL_DETAILS_TOO_LARGE,
  FAILURE_TOO_LARGE,
  HEARTBEAT_TOO_LARGE,
  MEMO_TOO_LARGE,
  RESULT_TOO_LARGE,
  failureSize,
  memoSize,
  overLimit,
  payloadsSize,
  serverFailure,
  truncateFailure,
} from './limits';

type Req = Record<string, any>;

/** Frontend checks of client requests, after the request's other checks (request-checks.ts). */
export function checkRequestPayloads(eng: Engine, method: string, req: Req): void {
  if (method === 'WorkflowService/SignalWorkflowExecution') {
    const exec = req.workflowExecution ?? {};
    checkSignalPayload(eng, req.namespace, exec.workflowId, req.input, 'SignalWorkflowExecution', exec.runId);
  } else if (method === 'WorkflowService/QueryWorkflow') {
    const ctx = {
      namespace: req.namespace,
      workflowId: req.execution?.workflowId,
      runId: req.execution?.runId,
      operation: 'QueryWorkflow',
    };
    if (overLimit(eng, payloadsSize(req.query?.queryArgs), ctx)) throw invalidArgument(BLOB_TOO_LARGE);
  }
}

export function checkSignalPayload(
  eng: Engine,
  namespace: string,
  workflowId: string,
  input: Payloads | undefined,
  operation: string,
  runId?: string,
): void {
  if (overLimit(eng, payloadsSize(input), { namespace, workflowId, runId, operation }))
    throw invalidArgument(BLOB_TOO_LARGE);
}

/** A start's input and memo (after the start's other checks, as the history service makes them). */
export function checkStartPayloads(
  eng: Engine,
  namespace: string,
  req: Req,
  operation = 'StartWorkflowExecution',
): void {
  const ctx = { namespace, workflowId: req.workflowId, operation };
  if (overLimit(eng, payloadsSize(req.input), ctx)) throw invalidArgument(BLOB_TOO_LARGE);
  if (overLimit(eng, memoSize(req.memo), ctx, 'memo')) throw invalidArgument(MEMO_TOO_LARGE);
}

function ctxOf(e: Execution, operation: string) {
  return { namespace: e.namespace, workflowId: e.workflowId, runId: e.runId, operation };
}

/** The failure an oversized activity result (RespondActivityTaskCompleted) turns into, if it is one. */
export function oversizedResult(
  eng: Engine,
  e: Execution,
  result: Payloads | undefined,
  operation: string,
): Failure | undefined {
  return overLimit(eng, payloadsSize(result), ctxOf(e, operation)) ? serverFailure(RESULT_TOO_LARGE, true) : undefined;
}

/** The failure oversized cancellation details (RespondActivityTaskCanceled) turn into, if they are. */
export function oversizedCancelDetails(
  eng: Engine,
  e: Execution,
  details: Payloads | undefined,
  operation: string,
): Failure | undefined {
  return overLimit(eng, payloadsSize(details), ctxOf(e, operation))
    ? serverFailure(CANCEL_DETAILS_TOO_LARGE, true)
    : undefined;
}

/** The failure oversized heartbeat details turn into (the activity fails; its worker is told to cancel). */
export function oversizedHeartbeat(
  eng: Engine,
  e: Execution,
  details: Payloads | undefined,
  operation: string,
): Failure | undefined {
  return overLimit(eng, payloadsSize(details), ctxOf(e, operation))
    ? serverFailure(HEARTBEAT_TOO_LARGE, true)
    : undefined;
}

/** A reported failure as the server keeps it: an oversized one becomes its own, non-retryable. */
export function limitFailure(
  eng: Engine,
  ctx: { namespace: string; workflowId?: string; runId?: string },
  failure: Failure,
  operation: string,
): Failure {
  if (!overLimit(eng, failureSize(failure), { ...ctx, operation })) return failure;
  return serverFailure(FAILURE_TOO_LARGE, true, truncateFailure(failure, eng.limits.blobSizeWarn));
}

export interface ActivityFailedReport {
  failure: Failure;
  lastHeartbeatDetails?: Payloads;
  /** What RespondActivityTaskFailed answers: the failures the server put in the worker's place. */
  failures: Failure[];
}

/** RespondActivityTaskFailed: oversized heartbeat details are dropped, an oversized failure replaced. */
export function limitActivityFailed(eng: Engine, e: Execution, req: Req, operation: string): ActivityFailedReport {
  const out: ActivityFailedReport = {
    failure: req.failure ?? {},
    lastHeartbeatDetails: req.lastHeartbeatDetails,
    failures: [],
  };
  const heartbeat = req.lastHeartbeatDetails
    ? oversizedHeartbeat(eng, e, req.lastHeartbeatDetails, operation)
    : undefined;
  if (heartbeat) {
    out.failures.push(heartbeat);
    out.lastHeartbeatDetails = undefined;
  }
  const failure = limitFailure(eng, e, out.failure, operation);
  if (failure !== out.failure) {
    out.failure = failure;
    out.failures.push(failure);
  }
  return out;
}

/** The error an oversized query answer fails its query with, if it is one. */
export function oversizedQueryAnswer(
  eng: Engine,
  e: Execution,
  answer: Payloads | undefined,
  operation: string,
): RpcError | undefined {
  return overLimit(eng, payloadsSize(answer), ctxOf(e, operation)) ? invalidArgument(BLOB_TOO_LARGE) : undefined;
}

// ---- a worker's report on an activity task, limits applied -------------------------

type Report = { e: Execution; info: ActivityInfo; req: Req; operation: string };

export function reportActivityCompleted(eng: Engine, { e, info, req, operation }: Report): void {
  const tooLarge = oversizedResult(eng, e, req.result, operation);
  if (tooLarge) failActivity(eng, e, info, tooLarge, undefined, req.identity);
  else completeActivity(eng, e, info, req.result, req.identity);
}

/** Returns what RespondActivityTaskFailed answers. */
export function reportActivityFailed(eng: Engine, { e, info, req, operation }: Report): { failures: Failure[] } {
  const r = limitActivityFailed(eng, e, req, operation);
  failActivity(eng, e, info, r.failure, r.lastHeartbeatDetails, req.identity);
  return { failures: r.failures };
}

export function reportActivityCanceled(eng: Engine, { e, info, req, operation }: Report): void {
  const tooLarge = oversizedCancelDetails(eng, e, req.details, operation);
  if (tooLarge) failActivity(eng, e, info, tooLarge, undefined, req.identity);
  else canceledActivity(eng, e, info, req.details, req.identity);
}

/** An oversized heartbeat fails the activity, and its worker is told to cancel it. */
export function reportHeartbeat(eng: Engine, { e, info, req, operation }: Report): { cancelRequested: boolean } {
  const tooLarge = oversizedHeartbeat(eng, e, req.details, operation);
  if (!tooLarge) return heartbeatActivity(eng, e, info, req.details);
  failActivity(eng, e, info, tooLarge, undefined, req.identity);
  return { cancelRequested: true };
}
