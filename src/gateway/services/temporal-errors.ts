// Maps Temporal client failures to service errors: a missing workflow is the
// client's 404; an unreachable Temporal is a 503 with Retry-After, never a hang.
import { WorkflowNotFoundError } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { DependencyUnavailableError, NotFoundError, ServiceError } from '../../common/errors';

const UNAVAILABLE = new Set<number>([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.CANCELLED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

/** The gRPC status code of a Temporal client error: its own, or the one of the call it wraps. */
export function grpcCodeOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'number' ? e.code : e?.cause?.code;
  return typeof code === 'number' ? code : undefined;
}

export function mapTemporalError(err: unknown, notFound = 'task not found'): Error {
  if (err instanceof ServiceError) return err;
  if (err instanceof WorkflowNotFoundError) return new NotFoundError(notFound);
  const e = err as { name?: string; message?: string };
  const code = grpcCodeOf(err);
  if (code === GrpcStatus.NOT_FOUND) return new NotFoundError(notFound);
  if (typeof code === 'number' && UNAVAILABLE.has(code))
    return new DependencyUnavailableError('temporal', 'Temporal is unavailable; retry shortly');
  if (
    e?.name === 'ServiceError' ||
    /ECONNREFUSED|UNAVAILABLE|No connection established|Deadline exceeded/i.test(e?.message ?? '')
  ) {
    return new DependencyUnavailableError('temporal', 'Temporal is unavailable; retry shortly');
  }
  return err as Error;
}

/** A gRPC deadline that passed (the call's own code, or the one the client wrapped). */
export function isDeadlineExceeded(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  return e?.code === GrpcStatus.DEADLINE_EXCEEDED || e?.cause?.code === GrpcStatus.DEADLINE_EXCEEDED;
}

export async function temporalCall<T>(fn: () => Promise<T>, notFound?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapTemporalError(err, notFound);
  }
}
