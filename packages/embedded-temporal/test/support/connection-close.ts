// Test connections that close cleanly while a call of theirs is still retrying.
//
// The SDK's gRPC retry interceptor waits out a backoff with a timer and then opens the next
// attempt on the channel. A test that closes its connection while such a timer is pending (a
// long poll left open, then the server stopped under it: the real server answers UNAVAILABLE as
// it goes down) gets the next attempt thrown from that timer, 'Channel has been shut down', as an
// uncaught error: jest pins it on whichever file that worker runs next. Here every connection made
// with the default interceptors retries only while it is open, and its close waits for a retry
// already scheduled to start (at most the SDK's 5 s backoff, plus jitter) before the channel goes.
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

type ConnectionOptions = NonNullable<Parameters<typeof Connection.lazy>[0]>;

let installed = false;

/** Makes Connection.lazy (and so Connection.connect) hand out guarded connections; once per module registry. */
export function installConnectionCloseGuard(): void {
  if (installed) return;
  installed = true;
  const lazy = Connection.lazy.bind(Connection);
  Connection.lazy = (options?: ConnectionOptions) => (options?.interceptors ? lazy(options) : guarded(lazy, options));
}

function guarded(lazy: (options?: ConnectionOptions) => Connection, options?: ConnectionOptions): Connection {
  const base = defaultGrpcRetryOptions();
  let closed = false;
  /** When the last retry scheduled so far starts, ms since the epoch. */
  let retriesUntil = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !closed && base.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const ms = base.delayFunction(attempt, status);
      retriesUntil = Math.max(retriesUntil, Date.now() + ms);
      return ms;
    },
  });
  const connection = lazy({ ...options, interceptors: [interceptor] });
  const close = connection.close.bind(connection);
  connection.close = async () => {
    closed = true;
    const wait = retriesUntil - Date.now();
    // The pending attempt starts on the open channel; its answer is final (no retry once closed).
    if (wait > 0) await new Promise((r) => setTimeout(r, wait + 50));
    await close();
  };
  return connection;
}
