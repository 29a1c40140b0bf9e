// What the app answers when no route took a request: 405 with Allow for a path it
// serves with other methods, else 404; and OPTIONS, with the same Allow. The methods
// come from the routes the app has registered (walked the way Express matches them),
// so Allow cannot drift from them.
import type { NextFunction, Request, Response } from 'express';
import { MethodNotAllowedError, NotFoundError } from '../../common/errors';

/** The parts of Express's router layers this reads. */
interface Layer {
  match(path: string): false | { path: string };
  route?: { methods: Record<string, boolean | undefined> };
  handle?: { stack?: Layer[] };
}

function methodsFor(stack: Layer[], path: string, into: Set<string>): Set<string> {
  for (const layer of stack) {
    let matched: false | { path: string };
    try {
      matched = layer.match(path);
    } catch {
      continue; // a path Express could not decode matches nothing here either
    }
    if (!matched) continue;
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods))
        if (on && method !== '_all') into.add(method.toUpperCase());
    } else if (Array.isArray(layer.handle?.stack)) {
      // A mounted router sees the path without its mount point.
      methodsFor(layer.handle.stack, path.slice(matched.path.length) || '/', into);
    }
  }
  return into;
}

/** The methods the app's routes serve at `path`, sorted (empty: an unknown path). */
export function allowedMethods(req: Request): string[] {
  const router = (req.app as unknown as { router?: { stack?: Layer[] } }).router;
  return [...methodsFor(router?.stack ?? [], req.path, new Set())].sort();
}

/** Mount after every route: 405 with Allow on a known path, 404 otherwise. */
export function noRoute() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const allow = allowedMethods(req);
    if (!allow.length) return next(new NotFoundError(`no route for ${req.method} ${req.path}`));
    next(
      new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}; it allows ${allow.join(', ')}`, allow),
    );
  };
}

/**
 * Mount before the routers: OPTIONS answered for the whole app (204 with Allow), 404 on an
 * unknown path. Express would let the first router holding the path answer it with that
 * router's methods alone (POST /datastores's upload router said `Allow: POST`, not GET).
 */
export function answerOptions() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'OPTIONS') return next();
    const allow = allowedMethods(req);
    if (!allow.length) return next(new NotFoundError(`no route for ${req.method} ${req.path}`));
    res.set('Allow', allow.join(', ')).status(204).end();
  };
}
