// HTTP requests by method, route template and status class: labels with a
// bounded set of values (a route's template, never its path: a task id in a
// label would make a series per task).
import type { NextFunction, Request, Response } from 'express';
import type { Counter, Histogram } from 'prom-client';
import { whenResponseDone } from '../http/response-done';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route that answered, as its template (`/tasks/:id`); `/codec` for the codec endpoint; `none` when no route did (404, a refused key). */
export function routeLabel(req: Pick<Request, 'route' | 'baseUrl' | 'originalUrl'>): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl ?? ''}${path}`;
  // The codec endpoint is middleware; its URL may hold the operator token, so only the prefix is kept.
  if (/^\/codec(\/|$|\?)/.test(req.originalUrl ?? '')) return '/codec';
  return 'none';
}

export const methodLabel = (method: string) => (METHODS.has(method) ? method : 'other');

export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/** Counts every request once, when its response is done (a stream: when it closes). */
export function httpMetrics(
  requests: Counter<'method' | 'route' | 'status_class'>,
  seconds: Histogram<'method' | 'route'>,
) {
  return (req: Request, res: Response, next: NextFunction) => {
    whenResponseDone(res, (elapsed) => {
      const labels = { method: methodLabel(req.method), route: routeLabel(req) };
      requests.inc({ ...labels, status_class: statusClass(res.statusCode) });
      seconds.observe(labels, elapsed);
    });
    next();
  };
}
