// An http.Server for an Express app whose requests and responses are born with
// the app's prototypes.
//
// Express 5's app.handle re-parents every request and response onto
// app.request / app.response with Object.setPrototypeOf. In V8 that per-object
// prototype change makes each request's short-lived objects survive
// young-generation collections until the next full GC: on this machine a
// trivial Express route saw 3-7 ms scavenges with megabytes surviving each
// (0.2-0.4 ms without), and those pauses were its whole p99 tail
// (wrk, 1 connection: p99 5.2 ms vs 0.6-1.7 ms). Node lets a server build its
// requests and responses from given constructors; when their prototype already
// is the app's, Express's setPrototypeOf finds nothing to change.
// `npm run bench:express` prints the comparison.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

type Ctor<A extends unknown[]> = new (...args: A) => object;

/**
 * A constructor whose instances are `base` instances with prototype `proto`.
 * It calls `base` as a plain function on the new object: Node's
 * IncomingMessage and ServerResponse are pre-class constructors that allow it.
 * (Reflect.construct with a new.target would also work for classes, but
 * measured no better than the stock server: the surviving garbage came back.)
 */
function bornWith<A extends unknown[]>(base: Ctor<A>, proto: object): Ctor<A> {
  function Born(this: object, ...args: A): void {
    (base as unknown as (this: object, ...a: A) => void).apply(this, args);
  }
  Born.prototype = proto;
  return Born as unknown as Ctor<A>;
}

/** True when `fn` can be called without `new` (not an ES class). */
const callable = (fn: unknown) => typeof fn === 'function' && !/^class\b/.test(Function.prototype.toString.call(fn));

/** Like `http.createServer(app)`, without Express's per-request prototype change. */
export function createExpressServer(app: Express, options: http.ServerOptions = {}): http.Server {
  // A Node whose classes can't be called this way gets the stock server: slower tails, same behaviour.
  if (!callable(http.IncomingMessage) || !callable(http.ServerResponse)) return http.createServer(options, app);
  return http.createServer(
    {
      ...options,
      IncomingMessage: bornWith<[Socket]>(
        http.IncomingMessage as Ctor<[Socket]>,
        app.request,
      ) as typeof http.IncomingMessage,
      ServerResponse: bornWith<[http.IncomingMessage]>(
        http.ServerResponse as unknown as Ctor<[http.IncomingMessage]>,
        app.response,
      ) as unknown as typeof http.ServerResponse,
    },
    app,
  );
}
