// Starting a workflow id: request-id de-duplication, id reuse policy (closed
// runs) and id conflict policy (running run), as the real server decides them.
import type { Engine } from './engine';
import type { Execution } from './state';
import { ConflictPolicy, ReusePolicy, WfStatus, msFromDur } from '../proto';
import { alreadyStarted, invalidArgument } from '../errors';
import { createRun, RunParams, terminateRun } from './lifecycle';
import { normalizeRetryPolicy } from './retry';
import { validateCron } from './cron-schedule';
import { validateStartAttributes } from './search-attributes';

export interface StartOutcome {
  run: Execution;
  started: boolean;
}

const MAX_TASK_TIMEOUT_MS = 120_000;

/** Builds run parameters from a StartWorkflowExecution-shaped request, validating it. */
export function paramsFromRequest(eng: Engine, req: any): RunParams {
  const ns = eng.namespace(req.namespace);
  if (!req.workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (req.workflowId.length > 1000) throw invalidArgument('WorkflowId length exceeds limit.');
  if (!req.workflowType?.name) throw invalidArgument('WorkflowType is not set on request.');
  if (!req.taskQueue?.name) throw invalidArgument('TaskQueue is not set on request.');
  const execMs = msFromDur(req.workflowExecutionTimeout);
  let runMs = msFromDur(req.workflowRunTimeout);
  const taskMs = msFromDur(req.workflowTaskTimeout);
  if (execMs < 0 || runMs < 0 || taskMs < 0) throw invalidArgument('Invalid timeout: timeouts cannot be negative.');
  if (execMs > 0 && (runMs === 0 || runMs > execMs)) runMs = execMs;
  if (req.cronSchedule) validateCron(req.cronSchedule);
  validateStartAttributes(eng, ns.name, req.searchAttributes);
  const delayMs = msFromDur(req.workflowStartDelay);
  if (delayMs > 0 && req.cronSchedule) throw invalidArgument('CronSchedule and WorkflowStartDelay may not be used together.');
  return {
    namespace: ns.name,
    workflowId: req.workflowId,
    workflowType: req.workflowType.name,
    taskQueue: req.taskQueue.name,
    input: req.input,
    header: req.header,
    memo: req.memo?.fields,
    searchAttributes: req.searchAttributes?.indexedFields,
    runTimeoutMs: runMs,
    executionTimeoutMs: execMs,
    taskTimeoutMs: Math.min(taskMs > 0 ? taskMs : 10_000, MAX_TASK_TIMEOUT_MS),
    retryPolicy: req.retryPolicy ? normalizeRetryPolicy(req.retryPolicy, 'Invalid WorkflowRetryPolicy') : undefined,
    cronSchedule: req.cronSchedule || undefined,
    requestId: req.requestId || eng.newId(),
    identity: req.identity,
    backoffMs: delayMs,
    attempt: 1,
    userMetadata: req.userMetadata,
    priority: req.priority,
    completionCallbacks: req.completionCallbacks,
    links: req.links,
  };
}

function closedOk(status: number): boolean {
  return status === WfStatus.COMPLETED;
}

export function startWorkflow(eng: Engine, p: RunParams, reusePolicy = 0, conflictPolicy = 0): StartOutcome {
  const existing = eng.currentRun(p.namespace, p.workflowId);
  if (existing) {
    // The same request again (a client retry) gets the same answer, whatever the policies.
    if (existing.requestIds.includes(p.requestId)) return { run: existing, started: !p.signal };
    if (eng.isOpen(existing)) {
      let conflict = conflictPolicy || ConflictPolicy.FAIL;
      if (reusePolicy === ReusePolicy.TERMINATE_IF_RUNNING) conflict = ConflictPolicy.TERMINATE_EXISTING;
      if (conflict === ConflictPolicy.USE_EXISTING) {
        existing.requestIds.push(p.requestId);
        eng.markDirty(existing);
        return { run: existing, started: false };
      }
      if (conflict === ConflictPolicy.TERMINATE_EXISTING) {
        terminateRun(eng, existing, 'terminated by new start request (workflow id conflict policy)', undefined, p.identity);
      } else {
        throw alreadyStarted(`Workflow execution is already running. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}.`, existing.startRequestId, existing.runId);
      }
    } else {
      const reuse = reusePolicy || ReusePolicy.ALLOW_DUPLICATE;
      if (reuse === ReusePolicy.REJECT_DUPLICATE) {
        throw alreadyStarted(`Workflow execution already finished and WorkflowIdReusePolicy is AllowDuplicateFailedOnly or RejectDuplicate. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}.`, existing.startRequestId, existing.runId);
      }
      if (reuse === ReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY && closedOk(existing.status)) {
        throw alreadyStarted(`Workflow execution already finished successfully. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}. Workflow Id reuse policy: allow duplicate workflow Id if last run failed.`, existing.startRequestId, existing.runId);
      }
    }
  }
  return { run: createRun(eng, p), started: true };
}
