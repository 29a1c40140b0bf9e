// Errors the server answers with. Each carries the gRPC status the real Temporal
// frontend uses for the same condition, and optionally a typed errordetails message.
import { status as GrpcStatus, Metadata } from '@grpc/grpc-js';
import { encode, toAny } from './proto';

export class RpcError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
    readonly detail?: { typeName: string; value: object },
  ) {
    super(message);
    this.name = 'RpcError';
  }

  /** Metadata carrying google.rpc.Status so SDKs can decode the typed failure. */
  metadata(): Metadata {
    const md = new Metadata();
    if (this.detail) {
      const st = encode('google.rpc.Status', {
        code: this.code,
        message: this.message,
        details: [toAny(this.detail.typeName, this.detail.value)],
      });
      md.set('grpc-status-details-bin', Buffer.from(st));
    }
    return md;
  }
}

const D = 'temporal.api.errordetails.v1.';

export const invalidArgument = (message: string) => new RpcError(GrpcStatus.INVALID_ARGUMENT, message);

export const notFound = (message: string) =>
  new RpcError(GrpcStatus.NOT_FOUND, message, { typeName: `${D}NotFoundFailure`, value: {} });

export const namespaceNotFound = (namespace: string) =>
  new RpcError(GrpcStatus.NOT_FOUND, `Namespace ${namespace} is not found.`, {
    typeName: `${D}NamespaceNotFoundFailure`,
    value: { namespace },
  });

/** The real server's words: a missing run, or no run at all under the id (its current-run lookup). */
export const workflowNotFound = (workflowId: string, runId?: string) =>
  notFound(
    runId
      ? `workflow execution not found for workflow ID "${workflowId}" and run ID "${runId}"`
      : `workflow not found for ID: ${workflowId}`,
  );

export const workflowCompleted = () => notFound('workflow execution already completed');

export const alreadyStarted = (message: string, startRequestId: string, runId: string, firstExecutionRunId?: string) =>
  new RpcError(GrpcStatus.ALREADY_EXISTS, message, {
    typeName: `${D}WorkflowExecutionAlreadyStartedFailure`,
    value: { startRequestId, runId, firstExecutionRunId },
  });

export const alreadyExists = (message: string) => new RpcError(GrpcStatus.ALREADY_EXISTS, message);

export const namespaceAlreadyExists = (namespace: string) =>
  new RpcError(GrpcStatus.ALREADY_EXISTS, `Namespace "${namespace}" already exists`, {
    typeName: `${D}NamespaceAlreadyExistsFailure`,
    value: {},
  });

/** The real server's "workflow not ready" (FAILED_PRECONDITION with WorkflowNotReadyFailure). */
export const workflowNotReady = (message: string) =>
  new RpcError(GrpcStatus.FAILED_PRECONDITION, message, { typeName: `${D}WorkflowNotReadyFailure`, value: {} });

export const namespaceNotSet = () => invalidArgument('Namespace not set on request.');

export const invalidPageToken = () => invalidArgument('Invalid NextPageToken.');

/**
 * A request whose bytes are not a valid protobuf message. grpc-go (so the real server)
 * answers INTERNAL here; we answer INVALID_ARGUMENT so INTERNAL keeps meaning "server bug".
 */
export const undecodableRequest = (detail: string) => invalidArgument(`grpc: error unmarshalling request: ${detail}`);

/** A request past the frontend's receive limit, in grpc-go's words (the real frontend's). */
export const messageTooLarge = (size: number, max: number) =>
  new RpcError(GrpcStatus.RESOURCE_EXHAUSTED, `grpc: received message larger than max (${size} vs. ${max})`);

export const failedPrecondition = (message: string) => new RpcError(GrpcStatus.FAILED_PRECONDITION, message);

export const unimplemented = (method: string) =>
  new RpcError(GrpcStatus.UNIMPLEMENTED, `${method} is not implemented by the embedded Temporal dev server`);

export const queryFailed = (message: string, failure?: object) =>
  new RpcError(GrpcStatus.INVALID_ARGUMENT, message, { typeName: `${D}QueryFailedFailure`, value: { failure } });

export const deadlineExceeded = (message: string) => new RpcError(GrpcStatus.DEADLINE_EXCEEDED, message);

export const unavailable = (message: string) => new RpcError(GrpcStatus.UNAVAILABLE, message);

export function require_<T>(value: T | undefined | null | '', message: string): T {
  if (value === undefined || value === null || value === '') throw invalidArgument(message);
  return value;
}

export const permissionDenied = (message: string) =>
  new RpcError(GrpcStatus.PERMISSION_DENIED, message, { typeName: `${D}PermissionDeniedFailure`, value: {} });

/** One operation's part in a failed ExecuteMultiOperation: its error, ABORTED_OPERATION, or null (it succeeded). */
export type OperationError = RpcError | typeof ABORTED_OPERATION | null;

/** An operation not carried out because another one failed. */
export const ABORTED_OPERATION = 'aborted' as const;

/**
 * ExecuteMultiOperation's failure: one status per operation in MultiOperationExecutionFailure.
 * Its code is the first failed (not aborted) operation's, as the real server sets it.
 */
export function multiOperationFailed(errors: OperationError[]): RpcError {
  const statuses = errors.map(operationStatus);
  const first = errors.find((e): e is RpcError => e instanceof RpcError);
  return new RpcError(first?.code ?? GrpcStatus.ABORTED, 'Update-with-Start could not be executed.', {
    typeName: `${D}MultiOperationExecutionFailure`,
    value: { statuses },
  });
}

function operationStatus(e: OperationError): object {
  if (e === null) return { code: GrpcStatus.OK, message: '', details: [] };
  if (e === ABORTED_OPERATION) {
    return {
      code: GrpcStatus.ABORTED,
      message: 'Operation was aborted.',
      details: [toAny('temporal.api.failure.v1.MultiOperationExecutionAborted', {})],
    };
  }
  return { code: e.code, message: e.message, details: e.detail ? [toAny(e.detail.typeName, e.detail.value)] : [] };
}
