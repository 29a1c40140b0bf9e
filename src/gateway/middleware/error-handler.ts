// The one place errors become HTTP: {error: {type, message, details}}, with the
// headers that tell a client whether and when to try again (x-should-retry,
// Retry-After).
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  DependencyUnavailableError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  ServiceError,
  ValidationError,
  validationError,
} from '../../common/errors';

/** 1048576 → "1 MiB", 65536 → "64 KiB". */
const humanBytes = (n: number) =>
  n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(2)} MiB` : `${+(n / 1024).toFixed(2)} KiB`;

function fromBodyParser(err: {
  type?: string;
  status?: number;
  message?: string;
  limit?: number;
}): ServiceError | undefined {
  if (err.type === 'entity.too.large') {
    const limit = Number(err.limit);
    return new PayloadTooLargeError(`request body exceeds the limit of ${limit} bytes (${humanBytes(limit)})`, {
      limit,
    });
  }
  if (err.type === 'entity.parse.failed')
    return ValidationError.at('body', `malformed JSON: ${err.message}`, 'malformed_json');
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported')
    return ValidationError.at('body', err.message ?? 'unsupported body encoding', 'unsupported_encoding');
  return undefined;
}

/** Express's router could not percent-decode a path parameter (`%zz`): a malformed path, not a fault of ours. */
function fromRouter(err: unknown): ServiceError | undefined {
  if (!(err instanceof URIError) || (err as { status?: unknown }).status !== 400) return undefined;
  const value = /'(.*)'$/.exec(err.message)?.[1];
  return ValidationError.at(
    'path',
    `malformed percent-encoding${value === undefined ? '' : ` in ${JSON.stringify(value.slice(0, 80))}`}: % is followed by two hex digits of UTF-8`,
    'malformed_path',
  );
}

/** What an error answers: its status, the headers that say whether and when to retry, and the body. */
export function errorAnswer(known: ServiceError): {
  status: number;
  headers: Record<string, string>;
  body: { error: { type: string; message: string; details: unknown } };
} {
  const headers: Record<string, string> = { 'x-should-retry': String(known.retryable) };
  if (known instanceof DependencyUnavailableError) headers['Retry-After'] = String(known.retryAfterSeconds);
  if (known.status === 401) headers['WWW-Authenticate'] = 'Bearer realm="agent-service"';
  if (known instanceof MethodNotAllowedError) headers.Allow = known.allow.join(', ');
  return {
    status: known.status,
    headers,
    body: { error: { type: known.type, message: known.message, details: known.details ?? null } },
  };
}

/**
 * An unexpected error's retry advice. Generated clients (Agentbase's SDKs) send a 500'd request
 * again unless told not to; a request that changes something may have done so before it failed,
 * so it is told not to, unless it can be sent again safely: POST / with an Idempotency-Key (the
 * same key finds the run if it started). A read is left to the client.
 */
function unexpectedRetryHeaders(req: Request): Record<string, string> {
  if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return {};
  const replayable = req.method === 'POST' && req.path === '/' && req.header('idempotency-key') !== undefined;
  return replayable ? {} : { 'x-should-retry': 'false' };
}

export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known =
      err instanceof ServiceError
        ? err
        : err instanceof z.ZodError
          ? validationError(err, 'body')
          : (fromRouter(err) ?? fromBodyParser(err as object));
    if (!known) {
      logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
      if (!res.headersSent)
        res
          .set(unexpectedRetryHeaders(req))
          .status(500)
          .json({ error: { type: 'internal', message: 'internal error', details: null } });
      return;
    }
    if (known.status >= 500) logger.warn({ err: known.message, path: req.path }, 'request failed');
    if (res.headersSent) return void res.end();
    const answer = errorAnswer(known);
    res.set(answer.headers).status(answer.status).json(answer.body);
  };
}
