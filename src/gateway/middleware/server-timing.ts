// Server-Timing (W3C) on every response: how long the gateway held the request
// and how much of that went to each dependency call, so a client (or a
// browser's network panel) can tell a slow Temporal from a slow gateway
// without access to the server's logs. Durations only; names are fixed
// tokens, never request data.
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';

/** Metric names, as they appear in the header. */
export type TimingName = 'temporal-start' | 'temporal-session' | 'redis';

export class ServerTiming {
  private readonly startedAt = performance.now();
  private readonly spans: { name: TimingName; ms: number }[] = [];

  /** Times `fn`; calls that run in parallel each get their own entry. */
  async measure<T>(name: TimingName, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.spans.push({ name, ms: performance.now() - t0 });
    }
  }

  /** The header value: each span, then `total` (request arrival to response headers). */
  header(): string {
    const parts = this.spans.map((s) => `${s.name};dur=${s.ms.toFixed(2)}`);
    parts.push(`total;dur=${(performance.now() - this.startedAt).toFixed(2)}`);
    return parts.join(', ');
  }
}

declare module 'express-serve-static-core' {
  interface Request {
    timing?: ServerTiming;
  }
}

/** First middleware: starts the clock and writes the header just before the response's headers go out. */
export function serverTiming() {
  return (req: Request, res: Response, next: NextFunction) => {
    const timing = new ServerTiming();
    req.timing = timing;
    // Every response path (res.json, res.end, an SSE stream's first write) passes through writeHead.
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      if (!this.headersSent) this.setHeader('Server-Timing', timing.header());
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}

/** Durations (ms) by name from a Server-Timing header (ours or any); a name given twice keeps the longer. */
export function parseServerTiming(header: string | null | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().split(';');
    const dur = params.map((p) => /^dur=([0-9.]+)$/.exec(p.trim())).find(Boolean);
    if (name && dur) out[name] = Math.max(out[name] ?? 0, Number(dur[1]));
  }
  return out;
}

/** Runs `fn` under the request's timing when there is one. */
export function timed<T>(timing: ServerTiming | undefined, name: TimingName, fn: () => Promise<T>): Promise<T> {
  return timing ? timing.measure(name, fn) : fn();
}
