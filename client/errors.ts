// Errors of the client, typed by HTTP status as openai-node does, so callers
// can `catch (e) { if (e instanceof NotFoundError) ... }` instead of reading
// status codes. Every non-2xx answer of the service has the body
// {error: {type, message, details}} (src/gateway/middleware/error-handler.ts); anything
// else (a proxy's HTML page, a cut body) still becomes an error of its status.

export class AgentApiError extends Error {
  /** HTTP status; undefined when no answer came (ConnectionError). */
  readonly status: number | undefined;
  /** The service's machine-readable kind (`not_found`, `conflict`, ...). */
  readonly type: string;
  /** The problems of a request (400, 422), an object ({dependency} on 503), or null. */
  readonly details: unknown;
  readonly headers: Headers;

  constructor(
    status: number | undefined,
    type: string,
    message: string,
    details: unknown = null,
    headers: Headers = new Headers(),
  ) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.type = type;
    this.details = details;
    this.headers = headers;
  }
}

export class BadRequestError extends AgentApiError {}
export class AuthenticationError extends AgentApiError {}
export class NotFoundError extends AgentApiError {}
export class ConflictError extends AgentApiError {}
/** 413: a body past a limit (BODY_LIMIT_BYTES, an upload past the workspace's quota: details say which). */
export class PayloadTooLargeError extends AgentApiError {}
export class UnprocessableEntityError extends AgentApiError {}
export class RateLimitError extends AgentApiError {}
export class InternalServerError extends AgentApiError {}

/** 503: a dependency of the service is down; `retryAfter` (seconds) is when to try again. */
export class ServiceUnavailableError extends InternalServerError {
  readonly retryAfter: number | undefined;
  constructor(status: number, type: string, message: string, details: unknown, headers: Headers) {
    super(status, type, message, details, headers);
    this.retryAfter = retryAfterSeconds(headers);
  }
}

/** No HTTP answer: refused, reset, DNS, or cut before the headers. `cause` has the network error. */
export class ConnectionError extends AgentApiError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(undefined, 'connection_error', message);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** The request took longer than the client's timeoutMs. */
export class ConnectionTimeoutError extends ConnectionError {}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const BY_STATUS: Record<number, new (s: number, t: string, m: string, d: unknown, h: Headers) => AgentApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error for a non-2xx answer whose body text is `text`. */
export function errorFromResponse(status: number, headers: Headers, text: string): AgentApiError {
  let type = 'http_error';
  let message = text.trim().slice(0, 500) || `HTTP ${status}`;
  let details: unknown = null;
  try {
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown; details?: unknown } };
    if (body && typeof body.error === 'object' && body.error) {
      if (typeof body.error.type === 'string') type = body.error.type;
      if (typeof body.error.message === 'string') message = body.error.message;
      details = body.error.details ?? null;
    }
  } catch {
    // Not the service's error body (a proxy's page, say): keep the text as the message.
  }
  const Cls = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : AgentApiError);
  return new Cls(status, type, message, details, headers);
}
