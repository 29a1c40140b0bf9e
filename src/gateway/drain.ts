// A graceful stop of the gateway: no new connections; requests in flight are
// answered (within a deadline); SSE streams end cleanly, at an event boundary,
// so their clients come back on another gateway (or this one restarted) with
// Last-Event-ID; a request that arrives on a kept-alive connection meanwhile
// gets 503 with Retry-After and Connection: close. Only what is left at the
// deadline is cut.
import type { Server } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { DependencyUnavailableError } from '../common/errors';

export class Drain {
  private readonly stopping = new AbortController();
  private inFlight = 0;
  private idle?: () => void;

  /** Aborted when the drain begins: open SSE streams end on it. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Counts the requests in flight (SSE streams too, until they end), and refuses new ones once draining. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      if (this.stopping.signal.aborted) {
        res.setHeader('Connection', 'close');
        return next(
          new DependencyUnavailableError(
            'gateway',
            'this gateway is stopping; retry (another gateway, or this one once restarted, will answer)',
            1,
          ),
        );
      }
      this.inFlight++;
      let counted = true;
      const done = () => {
        if (!counted) return;
        counted = false;
        this.inFlight--;
        if (this.inFlight === 0) this.idle?.();
      };
      res.once('finish', done);
      res.once('close', done);
      next();
    };
  }

  /** Stops the server gracefully; resolves once every request ended or `deadlineMs` passed (the rest are cut). */
  async run(server: Server, deadlineMs: number): Promise<{ cut: number }> {
    this.stopping.abort();
    server.close();
    server.closeIdleConnections();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const cut = this.inFlight;
    server.closeAllConnections();
    return { cut };
  }
}
