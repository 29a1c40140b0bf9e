// The gateway's server span per request: it joins the caller's trace when the
// request carries a W3C `traceparent`, is active for everything the request
// does (so a workflow it starts joins the trace: the Temporal client
// interceptor puts the context in the workflow's headers), and is named by
// method and route template once the route is known (`POST /`,
// `GET /tasks/:id`), never by the path: a path may carry a token (the codec
// endpoint's) and ids. Attributes: method, route, status code (and `aes.aborted`
// when the client left first). No header, query string or body.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { tracing } from './tracing';

/** The middleware, first in the app; undefined when this process has no tracing (nothing is added then). */
export function requestSpans(): RequestHandler | undefined {
  if (!tracing()) return undefined;
  const tracer = trace.getTracer('aes-gateway');
  return (req: Request, res: Response, next: NextFunction) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeTemplate(req);
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      // The client went away before the response was complete (a stream it stopped reading).
      if (!res.writableFinished) span.setAttribute('aes.aborted', true);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    // AsyncLocalStorage carries it on; the body parser keeps it across the body's arrival (raw-body binds its callback).
    context.with(ctx, next);
  };
}

/** The matched route's template (`/tasks/:id`), with its router's mount path; '' when no route matched (404, a refused key). */
export function routeTemplate(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl ?? ''}${path}`;
  // A handler mounted with app.use('/codec', ...) has no route of its own: its mount path.
  return req.baseUrl ?? '';
}
