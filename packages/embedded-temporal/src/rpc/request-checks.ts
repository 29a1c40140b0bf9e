// The checks the real frontend makes before a handler sees a request: its namespace
// validator interceptor (namespace present and registered, task token decodable and
// from the same namespace) and the shared execution validation of the workflow handler
// (workflow id present, run id a UUID). Doing them in one place keeps every handler's
// answer to the same mistake identical to the real server's, and keeps handlers from
// tripping over missing fields.
import type { Engine } from '../engine/engine';
import type { CallContext } from './grpc-service';
import { decodeToken, TaskToken } from '../engine/task-token';
import { UpdateStage } from '../proto';
import { checkRequestPayloads } from '../engine/payload-checks';
import { failedPrecondition, invalidArgument, namespaceNotSet, permissionDenied } from '../errors';

type Req = Record<string, any>;

const MAX_ID_LENGTH = 1000;

/** Methods (service/method) whose namespace may be absent or is resolved by the handler. */
const NAMESPACE_RULES: Record<string, 'skip' | 'nameOrId' | 'nameOnly' | 'ifSet'> = {
  'WorkflowService/GetSystemInfo': 'skip',
  'WorkflowService/ListNamespaces': 'skip',
  'WorkflowService/GetSearchAttributes': 'skip',
  'WorkflowService/GetClusterInfo': 'skip',
  'WorkflowService/DescribeNamespace': 'nameOrId',
  'WorkflowService/RegisterNamespace': 'nameOnly',
  'OperatorService/AddSearchAttributes': 'ifSet',
  'OperatorService/RemoveSearchAttributes': 'ifSet',
  'OperatorService/ListSearchAttributes': 'ifSet',
  'OperatorService/ListClusters': 'skip',
  'OperatorService/DeleteNamespace': 'ifSet',
  // The time-skipping TestService is not namespaced.
  'TestService/LockTimeSkipping': 'skip',
  'TestService/UnlockTimeSkipping': 'skip',
  'TestService/Sleep': 'skip',
  'TestService/SleepUntil': 'skip',
  'TestService/UnlockTimeSkippingWithSleep': 'skip',
  'TestService/GetCurrentTime': 'skip',
};

/** Which kind of task token a response method carries (see engine/task-token.ts). */
const TOKEN_KIND: Record<string, TaskToken['k']> = {
  'WorkflowService/RespondWorkflowTaskCompleted': 'w',
  'WorkflowService/RespondWorkflowTaskFailed': 'w',
  'WorkflowService/RespondQueryTaskCompleted': 'q',
  'WorkflowService/RespondActivityTaskCompleted': 'a',
  'WorkflowService/RespondActivityTaskFailed': 'a',
  'WorkflowService/RespondActivityTaskCanceled': 'a',
  'WorkflowService/RecordActivityTaskHeartbeat': 'a',
};

/** Methods whose target execution the real frontend validates up front, and the field holding it. */
const EXECUTION_FIELD: Record<string, string> = {
  'WorkflowService/GetWorkflowExecutionHistory': 'execution',
  'WorkflowService/GetWorkflowExecutionHistoryReverse': 'execution',
  'WorkflowService/DescribeWorkflowExecution': 'execution',
  'WorkflowService/QueryWorkflow': 'execution',
  'WorkflowService/ResetStickyTaskQueue': 'execution',
  'WorkflowService/SignalWorkflowExecution': 'workflowExecution',
  'WorkflowService/RequestCancelWorkflowExecution': 'workflowExecution',
  'WorkflowService/TerminateWorkflowExecution': 'workflowExecution',
  'WorkflowService/ResetWorkflowExecution': 'workflowExecution',
  'WorkflowService/DeleteWorkflowExecution': 'workflowExecution',
  'WorkflowService/UpdateWorkflowExecution': 'workflowExecution',
};

/** Methods whose request id the real frontend requires, checked before the execution. */
const REQUEST_ID_REQUIRED = new Set(['WorkflowService/ResetWorkflowExecution']);

/** Fields the real frontend requires before it looks anything up: [path, message when absent]. */
const REQUIRED: Record<string, [string, string][]> = {
  'WorkflowService/QueryWorkflow': [
    ['query', 'WorkflowQuery is not set on request.'],
    ['query.queryType', 'QueryType is not set on request.'],
  ],
  'WorkflowService/SignalWorkflowExecution': [['signalName', 'SignalName is not set on request.']],
  'WorkflowService/UpdateWorkflowExecution': [
    ['request.meta', 'Update meta is not set on request.'],
    ['request.input', 'Update input is not set on request.'],
    ['request.input.name', 'Update name is not set on request.'],
  ],
};

/** An activity's own failure must be an application failure (checked before its token is looked up). */
const ACTIVITY_FAILED = new Set([
  'WorkflowService/RespondActivityTaskFailed',
  'WorkflowService/RespondActivityTaskFailedById',
]);

/** Long polls: the real frontend refuses to hold one open without room for a real wait. */
const LONG_POLLS = new Set([
  'WorkflowService/PollWorkflowTaskQueue',
  'WorkflowService/PollActivityTaskQueue',
  'WorkflowService/PollNexusTaskQueue',
]);
const MIN_LONG_POLL_MS = 2000;

// The forms Go's uuid.Validate accepts: plain, braced, urn-prefixed, and without hyphens.
const UUID = /^(?:urn:uuid:|\{)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i;

export function isUuid(s: string): boolean {
  if (!UUID.test(s)) return false;
  // Braces must come in pairs and hyphens are all-or-nothing, as in the Go parser.
  const braced = s.startsWith('{');
  if (braced !== s.endsWith('}')) return false;
  const core = s.replace(/^urn:uuid:|^\{|\}$/gi, '');
  return core.length === 36 || core.length === 32;
}

/** Throws the RpcError the real frontend would answer with, or returns to let the handler run. */
export function checkRequest(eng: Engine, method: string, req: Req, ctx?: CallContext): void {
  if (ACTIVITY_FAILED.has(method) && req.failure && !req.failure.applicationFailureInfo) {
    throw invalidArgument('Failure must have ApplicationFailureInfo.');
  }
  checkNamespace(eng, method, req);
  if (REQUEST_ID_REQUIRED.has(method)) {
    if (!req.requestId) throw invalidArgument('RequestId is not set on request.');
    if (req.requestId.length > MAX_ID_LENGTH) throw invalidArgument('RequestId length exceeds limit.');
  }
  const field = EXECUTION_FIELD[method];
  if (field) checkExecution(req[field]);
  for (const [path, message] of REQUIRED[method] ?? []) {
    const v = path.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), req);
    if (v === undefined || v === null || v === '') throw invalidArgument(message);
  }
  if (method === 'WorkflowService/UpdateWorkflowExecution' && req.waitPolicy?.lifecycleStage === UpdateStage.ADMITTED) {
    throw permissionDenied(
      'UpdateWorkflowExecution issued asynchronously and waiting on update admitted is not supported.',
    );
  }
  if (LONG_POLLS.has(method) && ctx) {
    if (ctx.deadline === undefined) throw invalidArgument('Context timeout is not set.');
    if (ctx.deadline - Date.now() < MIN_LONG_POLL_MS) throw failedPrecondition('Context timeout is too short.');
  }
  checkRequestPayloads(eng, method, req);
}

function checkNamespace(eng: Engine, method: string, req: Req): void {
  const rule = NAMESPACE_RULES[method];
  if (rule === 'skip') return;
  const name: string = typeof req.namespace === 'string' ? req.namespace : '';
  if (name.length > MAX_ID_LENGTH) throw invalidArgument('Namespace length exceeds limit.');

  const kind = TOKEN_KIND[method];
  if (kind) {
    // Throws INVALID_ARGUMENT for an absent or undecodable token, like the interceptor
    // (and NOT_FOUND for a token of another kind of task).
    const tokenNamespace = decodeToken(req.taskToken, kind).n;
    eng.namespace(tokenNamespace);
    if (!name) req.namespace = tokenNamespace;
    else if (name !== tokenNamespace)
      throw invalidArgument('Operation requested with a token from a different namespace.');
    return;
  }
  switch (rule) {
    case 'nameOrId':
      if (!name && !req.id) throw namespaceNotSet();
      return;
    case 'nameOnly':
      if (!name) throw namespaceNotSet();
      return;
    case 'ifSet':
      if (name) eng.namespace(name);
      return;
    default:
      if (!name) throw namespaceNotSet();
      eng.namespace(name);
  }
}

function checkExecution(exec: Req | undefined): void {
  if (!exec) throw invalidArgument('Execution is not set on request.');
  if (!exec.workflowId) throw invalidArgument('WorkflowId is not set on request.');
  if (exec.runId && !isUuid(exec.runId)) throw invalidArgument('Invalid RunId.');
}
