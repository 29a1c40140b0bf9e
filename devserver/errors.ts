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

export const workflowNotFound = (workflowId: string, runId?: string) =>
  notFound(`workflow execution not found for workflow ID "${workflowId}"${runId ? ` and run ID "${runId}"` : ''}`);

export const workflowCompleted = () => notFound('workflow execution already completed');

export const alreadyStarted = (message: string, startRequestId: string, runId: string) =>
  new RpcError(GrpcStatus.ALREADY_EXISTS, message, {
    typeName: `${D}WorkflowExecutionAlreadyStartedFailure`,
    value: { startRequestId, runId },
  });

export const alreadyExists = (message: string) => new RpcError(GrpcStatus.ALREADY_EXISTS, message);

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
