// Typed errors of the service, mapped once to HTTP in gateway/middleware/error-handler.ts.
// Each carries what a client needs to fix its request: a type, a message, details.
import type { z } from 'zod';
import { fieldPath } from './field-path';

export abstract class ServiceError extends Error {
  abstract readonly status: number;
  abstract readonly type: string;
  constructor(
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /**
   * Whether the same request, sent again unchanged, may succeed: the answer's x-should-retry.
   * Generated clients (Stainless: Agentbase's SDKs) retry every 408, 409, 429 and 5xx unless
   * told otherwise, which would repeat a request that only another request can fix.
   */
  get retryable(): boolean {
    return this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

/** One problem of a request: where (src/common/field-path.ts: `body.x.y[0]`, `query.x`, `path.id`, `header.X`), what, and a code. */
export interface RequestIssue {
  path: string;
  message: string;
  code: string;
}

/**
 * A request's problems, each at its place: the 400 and the 422 name them the same way, in the
 * order they were found, the message starting with the first one (path and reason) and going on
 * with the others, so a client that shows only the message still knows what to fix.
 */
abstract class RequestIssuesError extends ServiceError {
  static of<T extends RequestIssuesError>(
    this: new (message: string, details: RequestIssue[]) => T,
    issues: RequestIssue[],
  ): T {
    return new this(issues.map((x) => `${x.path}: ${x.message}`).join('; '), issues);
  }

  /** One problem at one place. */
  static at<T extends RequestIssuesError>(
    this: new (message: string, details: RequestIssue[]) => T,
    path: string,
    message: string,
    code: string,
  ): T {
    return new this(`${path}: ${message}`, [{ path, message, code }]);
  }
}

/** The request does not fit the API's document (openapi/openapi.json): a type, a format, a missing or unknown field. */
export class ValidationError extends RequestIssuesError {
  readonly status = 400;
  readonly type = 'invalid_request';
}

/**
 * The request fits the document, but the service cannot carry it out, for a reason no schema can
 * state: a reference to something the account does not have, a source that cannot be opened, a
 * schedule in the past, a cycle among workflow steps, a URL the outbound policy refuses, a limit
 * of this deployment. Kept apart from the 400 so that "fits the document" has one meaning: a
 * request the document allows is never a 400 (the contract test holds the service to it).
 */
export class UnprocessableRequestError extends RequestIssuesError {
  readonly status = 422;
  readonly type = 'unprocessable_request';
}

export class UnauthorizedError extends ServiceError {
  readonly status = 401;
  readonly type = 'unauthorized';
}

export class NotFoundError extends ServiceError {
  readonly status = 404;
  readonly type = 'not_found';
}

/** A known path asked with a method it does not serve; `allow` lists those it does (the Allow header). */
export class MethodNotAllowedError extends ServiceError {
  readonly status = 405;
  readonly type = 'method_not_allowed';
  constructor(
    message: string,
    readonly allow: string[],
  ) {
    super(message, { allow });
  }
}

/**
 * The request meets the state of a task or session. Most such states do not pass by themselves
 * (a finished task, a taken name, a busy session the client asked not to wait for); `retryLater`
 * marks one that does (a result not ready yet), which a client may ask again for unchanged.
 */
export class ConflictError extends ServiceError {
  readonly status = 409;
  readonly type = 'conflict';
  constructor(
    message: string,
    details?: unknown,
    private readonly retryLater = false,
  ) {
    super(message, details);
  }

  override get retryable(): boolean {
    return this.retryLater;
  }
}

export class PayloadTooLargeError extends ServiceError {
  readonly status = 413;
  readonly type = 'payload_too_large';
}

/** The request's header section (its URL included) is larger than the server reads; refused before any route sees it. */
export class HeadersTooLargeError extends ServiceError {
  readonly status = 431;
  readonly type = 'headers_too_large';
}

export class UnsupportedMediaTypeError extends ServiceError {
  readonly status = 415;
  readonly type = 'unsupported_media_type';
}

export class IdempotencyMismatchError extends ServiceError {
  readonly status = 422;
  readonly type = 'idempotency_key_reused';
}

/** A dependency (Redis, Temporal) is down; clients should retry after `retryAfterSeconds`. */
export class DependencyUnavailableError extends ServiceError {
  readonly status = 503;
  readonly type = 'unavailable';
  constructor(
    readonly dependency: 'redis' | 'temporal' | 'model' | 'gateway',
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message, { dependency });
  }
}

/**
 * A zod failure as the API's 400 (here, not in the gateway: the worker re-reads a schedule's stored
 * request with the request schema and words its refusal the same way): each issue at its path in the one style (src/common/field-path.ts),
 * an unknown field as an issue of its own at its own path, in zod's order (the fields as the
 * schema lists them, then the unknown ones).
 */
export function validationError(err: z.ZodError, where: 'body' | 'query'): ValidationError {
  const at = (path: readonly PropertyKey[]) =>
    fieldPath(where, ...path.map((p) => (typeof p === 'number' ? p : String(p))));
  const issues = err.issues.flatMap((i): RequestIssue[] => {
    if (i.code === 'unrecognized_keys')
      return i.keys.map((k) => ({ path: at([...i.path, k]), message: 'unknown field', code: i.code }));
    // A record's key: what is wrong with it, not zod's "Invalid key in record".
    if (i.code === 'invalid_key')
      return [{ path: at(i.path), message: i.issues[0]?.message ?? i.message, code: i.code }];
    return [{ path: at(i.path), message: i.message, code: i.code }];
  });
  return ValidationError.of(issues);
}
