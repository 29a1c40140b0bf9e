// Starting a workflow id: request-id de-duplication, id reuse policy (closed
// runs) and id conflict policy (running run), as the real server decides them;
// and SignalWithStart, which shares those rules.
import type { Engine } from './engine';
import type { Execution, Payloads } from './state';
import { ConflictPolicy, ContinueAsNewInitiator, ReusePolicy, WfStatus, msFromDur } from '../proto';
import { alreadyStarted, invalidArgument } from '../errors';
import { createRun, RunParams } from './create-run';
import { terminateRun } from './lifecycle';
import { normalizeRetryPolicy } from './retry';
import { cronBackoffMs, validateCron } from './cron-schedule';
import { validateStartAttributes, withoutNilPayloads } from './search-attributes';
import { signalRun, SignalInput } from './signals';
import { acceptsEagerStart } from './eager-start';
import { checkSignalPayload, checkStartPayloads } from './payload-checks';

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
  const now = eng.now();
  if (req.cronSchedule) validateCron(req.cronSchedule, now);
  validateStartAttributes(eng, ns.name, req.searchAttributes);
  const delayMs = msFromDur(req.workflowStartDelay);
  if (delayMs < 0) throw invalidArgument('Invalid WorkflowStartDelay: durations cannot be negative.');
  if (req.workflowStartDelay && req.cronSchedule)
    throw invalidArgument('CronSchedule and WorkflowStartDelay may not be used together.');
  checkStartPayloads(eng, ns.name, req);
  // A cron chain's first run waits for the first schedule time, like every later run.
  const backoffMs = req.cronSchedule ? Math.max(0, cronBackoffMs(req.cronSchedule, now, now) ?? 0) : delayMs;
  return {
    namespace: ns.name,
    workflowId: req.workflowId,
    workflowType: req.workflowType.name,
    taskQueue: req.taskQueue.name,
    input: req.input,
    header: req.header,
    memo: req.memo?.fields,
    searchAttributes: withoutNilPayloads(req.searchAttributes?.indexedFields),
    runTimeoutMs: runMs,
    executionTimeoutMs: execMs,
    taskTimeoutMs: Math.min(taskMs > 0 ? taskMs : 10_000, MAX_TASK_TIMEOUT_MS),
    retryPolicy: req.retryPolicy ? normalizeRetryPolicy(req.retryPolicy, 'Invalid WorkflowRetryPolicy') : undefined,
    cronSchedule: req.cronSchedule || undefined,
    initiator: req.cronSchedule ? ContinueAsNewInitiator.CRON_SCHEDULE : undefined,
    requestId: req.requestId || eng.newId(),
    identity: req.identity,
    backoffMs,
    attempt: 1,
    userMetadata: req.userMetadata,
    priority: req.priority,
    completionCallbacks: req.completionCallbacks,
    links: req.links,
  };
}

export interface Policies {
  reuse: number;
  conflict: number;
  /** OnConflictOptions.attachRequestId: a USE_EXISTING start records its request id on the run. */
  attachRequestId?: boolean;
}

/**
 * The frontend's defaults and checks: TERMINATE_IF_RUNNING (deprecated) becomes the
 * TERMINATE_EXISTING conflict policy; an unset conflict policy gets `defaultConflict`.
 */
export function resolvePolicies(
  reuse: number | undefined,
  conflict: number | undefined,
  defaultConflict: number,
): Policies {
  let r = reuse || ReusePolicy.ALLOW_DUPLICATE;
  let c = conflict || 0;
  if (c && r === ReusePolicy.TERMINATE_IF_RUNNING) {
    throw invalidArgument(
      'Invalid WorkflowIDReusePolicy: WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING cannot be used together with a WorkflowIDConflictPolicy',
    );
  }
  if (c === ConflictPolicy.TERMINATE_EXISTING && r === ReusePolicy.REJECT_DUPLICATE) {
    throw invalidArgument(
      'Invalid WorkflowIDReusePolicy: WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE cannot be used together with WorkflowIdConflictPolicy WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING',
    );
  }
  if (!c) {
    if (r === ReusePolicy.TERMINATE_IF_RUNNING) {
      c = ConflictPolicy.TERMINATE_EXISTING;
      r = ReusePolicy.ALLOW_DUPLICATE;
    } else c = defaultConflict;
  }
  return { reuse: r, conflict: c };
}

/** Run statuses after which ALLOW_DUPLICATE_FAILED_ONLY allows a new run. */
const FAILED_STATUSES = new Set([WfStatus.FAILED, WfStatus.CANCELED, WfStatus.TERMINATED, WfStatus.TIMED_OUT]);

function jsonStringPayloads(s: string): Payloads {
  return { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(s)) }] };
}

/** Terminates a running run to make way for a new one (TERMINATE_EXISTING), as the history service words it. */
function terminateForNewRun(eng: Engine, existing: Execution, newRunId: string): void {
  terminateRun(
    eng,
    existing,
    'TerminateIfRunning WorkflowIdReusePolicy',
    jsonStringPayloads(`terminated by new runID: ${newRunId}`),
    'history-service',
  );
}

/**
 * Starts a run unless the id's current run stands in the way. Policies are either
 * resolved already (resolvePolicies) or given as raw enum values (reuse, conflict).
 */
export function startWorkflow(
  eng: Engine,
  p: RunParams,
  policiesOrReuse: Policies | number = 0,
  conflictPolicy = 0,
): StartOutcome {
  const policies =
    typeof policiesOrReuse === 'number'
      ? resolvePolicies(policiesOrReuse, conflictPolicy, ConflictPolicy.FAIL)
      : policiesOrReuse;
  const existing = eng.currentRun(p.namespace, p.workflowId);
  if (existing) {
    // A retried request gets the answer the first one got, whatever the policies.
    if (existing.startRequestId === p.requestId) return { run: existing, started: true };
    if (existing.requestIds.includes(p.requestId)) return { run: existing, started: false };
    if (eng.isOpen(existing)) {
      if (policies.conflict === ConflictPolicy.USE_EXISTING) {
        if (policies.attachRequestId) {
          existing.requestIds.push(p.requestId);
          eng.markDirty(existing);
        }
        return { run: existing, started: false };
      }
      if (policies.conflict !== ConflictPolicy.TERMINATE_EXISTING) {
        throw alreadyStarted(
          `Workflow execution is already running. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}.`,
          existing.startRequestId,
          existing.runId,
          existing.firstRunId,
        );
      }
      p.runId ??= eng.newId();
      terminateForNewRun(eng, existing, p.runId);
    } else if (policies.reuse === ReusePolicy.REJECT_DUPLICATE) {
      throw alreadyStarted(
        `Workflow execution already finished. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}. Workflow Id reuse policy: reject duplicate workflow Id.`,
        existing.startRequestId,
        existing.runId,
        existing.firstRunId,
      );
    } else if (policies.reuse === ReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY && !FAILED_STATUSES.has(existing.status)) {
      throw alreadyStarted(
        `Workflow execution already finished successfully. WorkflowId: ${p.workflowId}, RunId: ${existing.runId}. Workflow Id reuse policy: allow duplicate workflow Id if last run failed.`,
        existing.startRequestId,
        existing.runId,
        existing.firstRunId,
      );
    }
  }
  return { run: createRun(eng, p), started: true };
}

/** StartWorkflowExecution. */
export function startFromRequest(eng: Engine, req: any): StartOutcome {
  const policies = resolvePolicies(req.workflowIdReusePolicy, req.workflowIdConflictPolicy, ConflictPolicy.FAIL);
  policies.attachRequestId = !!req.onConflictOptions?.attachRequestId;
  // One instant for the backoff (a cron's first time) and the start event's time.
  return eng.atOneInstant(() => {
    const p = paramsFromRequest(eng, req);
    p.eagerExecutionAccepted = acceptsEagerStart(req, p.backoffMs);
    return startWorkflow(eng, p, policies);
  });
}

/**
 * SignalWithStartWorkflowExecution: signals the running run (conflict policy
 * USE_EXISTING, the default here), or starts a new run with the signal as its
 * second event (nothing running, or TERMINATE_EXISTING). FAIL is refused.
 */
export function signalWithStart(eng: Engine, req: any): StartOutcome {
  if (!req.signalName) throw invalidArgument('SignalName is not set on request.');
  if (req.workflowIdConflictPolicy === ConflictPolicy.FAIL) {
    throw invalidArgument(
      'Invalid WorkflowIDConflictPolicy: WORKFLOW_ID_CONFLICT_POLICY_FAIL is not supported for this operation.',
    );
  }
  const p = paramsFromRequest(eng, req);
  checkSignalPayload(eng, p.namespace, p.workflowId, req.signalInput, 'SignalWithStartWorkflowExecution');
  const policies = resolvePolicies(
    req.workflowIdReusePolicy,
    req.workflowIdConflictPolicy,
    ConflictPolicy.USE_EXISTING,
  );
  const signal: SignalInput = {
    signalName: req.signalName,
    input: req.signalInput,
    identity: req.identity,
    header: req.header,
    requestId: req.requestId,
    links: req.links,
  };
  const current = eng.currentRun(p.namespace, p.workflowId);
  if (current && eng.isOpen(current) && policies.conflict === ConflictPolicy.USE_EXISTING) {
    signalRun(eng, current, signal);
    return { run: current, started: false };
  }
  p.signal = signal;
  return startWorkflow(eng, p, policies);
}
