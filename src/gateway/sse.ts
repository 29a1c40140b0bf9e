// Server-sent events to one HTTP client: `id: <seq>` + `data: <json>` per event,
// comment heartbeats while idle, end after the task's terminal event. The
// client disconnecting ends only this stream, never the task.
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { AgentEvent } from '../relay/events';
import { TERMINAL_EVENTS } from '../relay/events';
import type { EventSubscriber, Subscription } from '../relay/subscriber';

export interface StreamOptions {
  taskId: string;
  afterSeq: number;
  heartbeatMs: number;
  /** Status to send first (202-style headers are not possible once streaming). */
  headers?: Record<string, string>;
}

export async function streamTaskEvents(req: Request, res: Response, subscriber: EventSubscriber, logger: Logger, opts: StreamOptions): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [k, v] of Object.entries(opts.headers ?? {})) res.setHeader(k, v);
  res.flushHeaders();
  res.write(': stream open\n\n');

  let sub: Subscription | undefined;
  let closed = false;
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': keep-alive\n\n');
  }, opts.heartbeatMs);
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    sub?.close();
    res.end();
  };
  req.on('close', finish);
  res.on('close', finish);

  const send = (ev: AgentEvent) => {
    if (closed) return;
    res.write(`id: ${ev.seq}\ndata: ${JSON.stringify(ev)}\n\n`);
    if (TERMINAL_EVENTS.has(ev.type)) finish();
  };
  const fail = (err: Error) => {
    logger.warn({ err: err.message, taskId: opts.taskId }, 'event relay failed during a stream');
    if (!closed) res.write(`event: error\ndata: ${JSON.stringify({ error: { type: 'unavailable', message: 'the event relay is unavailable; reconnect with Last-Event-ID' } })}\n\n`);
    finish();
  };
  try {
    sub = await subscriber.subscribe(opts.taskId, opts.afterSeq, send, fail);
    if (closed) sub.close();
  } catch (err) {
    fail(err as Error);
  }
}

/** Where a client resumes: Last-Event-ID header, else ?after=, else the start. */
export function resumePoint(req: Request, after?: number): number {
  const header = req.header('last-event-id');
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim());
  return after ?? 0;
}
