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

export function mapTemporalError(err: unknown, notFound = 'task not found'): Error {
  if (err instanceof ServiceError) return err;
  if (err instanceof WorkflowNotFoundError) return new NotFoundError(notFound);
  const e = err as { code?: unknown; name?: string; message?: string; cause?: unknown };
  const code = typeof e?.code === 'number' ? e.code : (e?.cause as { code?: unknown })?.code;
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
