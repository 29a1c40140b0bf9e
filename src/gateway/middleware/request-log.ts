// One log line per request, when its response is done (a stream: when it
// closes): method, path, status, milliseconds, the task it concerns and the
// account. Never a body, a query string (a cursor is opaque, not a secret, but
// nothing is gained) or a header: keys and tokens stay out of the logs.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { whenResponseDone } from '../../common/http/response-done';

const TASK_IN_PATH = /^\/tasks\/(task_[A-Za-z0-9_-]+)/;
/** Probes answer load balancers every few seconds: logged at debug, not info. */
const PROBES = new Set(['/healthz', '/readyz']);

export function requestLog(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    whenResponseDone(res, (seconds) => {
      const task = res.getHeader('x-task-id') ?? TASK_IN_PATH.exec(req.path)?.[1];
      const line = {
        method: req.method,
        path: req.path,
        status: res.statusCode,
        ms: Math.round(seconds * 10_000) / 10,
        ...(task !== undefined && { task_id: String(task) }),
        ...(req.account && { account: req.account.account }),
        // The client went away before the response was complete (a stream it stopped reading, a dropped poll).
        ...(!res.writableFinished && { aborted: true }),
      };
      if (PROBES.has(req.path)) logger.debug(line, 'request');
      else logger.info(line, 'request');
    });
    next();
  };
}
