// Once per request, when its response is done: at `finish`, or at `close` for
// a response cut short (a stream the client stopped reading). Gets the
// seconds since the request came in.
import type { Response } from 'express';

export function whenResponseDone(res: Response, fn: (seconds: number) => void): void {
  const start = process.hrtime.bigint();
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    fn(Number(process.hrtime.bigint() - start) / 1e9);
  };
  res.once('finish', once);
  res.once('close', once);
}
