// The one place errors become HTTP: {error: {type, message, details}}.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { DependencyUnavailableError, MethodNotAllowedError, PayloadTooLargeError, ServiceError, ValidationError } from '../errors';

export function validationError(err: z.ZodError, where: 'body' | 'query'): ValidationError {
  const unknown = err.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => [...i.path, k].join('.')) : []));
  const message = unknown.length
    ? `unknown field${unknown.length > 1 ? 's' : ''} in ${where}: ${unknown.join(', ')}`
    : `invalid ${where}: ${err.issues.map((i) => `${i.path.join('.') || where}: ${i.message}`).join('; ')}`;
  return new ValidationError(message, err.issues.map((i) => ({ path: i.path.join('.'), message: i.message, code: i.code })));
}

/** 1048576 → "1 MiB", 65536 → "64 KiB". */
const humanBytes = (n: number) => (n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(2)} MiB` : `${+(n / 1024).toFixed(2)} KiB`);

function fromBodyParser(err: { type?: string; status?: number; message?: string; limit?: number }): ServiceError | undefined {
  if (err.type === 'entity.too.large') {
    const limit = Number(err.limit);
    return new PayloadTooLargeError(`request body exceeds the limit of ${limit} bytes (${humanBytes(limit)})`, { limit });
  }
  if (err.type === 'entity.parse.failed') return new ValidationError(`malformed JSON body: ${err.message}`);
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') return new ValidationError(err.message ?? 'unsupported body encoding');
  return undefined;
}

export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = err instanceof ServiceError ? err : err instanceof z.ZodError ? validationError(err, 'body') : fromBodyParser(err as object);
    if (!known) {
      logger.error({ err, method: req.method, path: req.path }, 'unhandled error');
      if (!res.headersSent) res.status(500).json({ error: { type: 'internal', message: 'internal error', details: null } });
      return;
    }
    if (known.status >= 500) logger.warn({ err: known.message, path: req.path }, 'request failed');
    if (res.headersSent) return void res.end();
    if (known instanceof DependencyUnavailableError) res.setHeader('Retry-After', String(known.retryAfterSeconds));
    if (known.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="agent-service"');
    if (known instanceof MethodNotAllowedError) res.setHeader('Allow', known.allow.join(', '));
    res.status(known.status).json({ error: { type: known.type, message: known.message, details: known.details ?? null } });
  };
}
