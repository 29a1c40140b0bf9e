// Server-sent events to one HTTP client: `id: <seq>` + `data: <json>` per event,
// comment heartbeats while idle, end after the task's terminal event. The
// client disconnecting ends only this stream, never the task. At every
// heartbeat the stream asks Temporal whether the run has closed (see
// run-end.ts): a terminated run's stream ends too, within a heartbeat, and so
// does one resumed at or past the task's last event.
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { AgentEvent } from '../common/relay/events';
import { TERMINAL_EVENTS } from '../common/relay/events';
import type { EventSubscriber, Subscription } from '../common/relay/subscriber';
import { ValidationError } from '../common/errors';
import { LAST_EVENT_ID } from './schemas/request';

export interface StreamOptions {
  taskId: string;
  afterSeq: number;
  heartbeatMs: number;
  /** The seq of the task's terminal event once its run has closed, else undefined (RunEnds.closedAt). */
  closedAt?: () => Promise<number | undefined>;
  /** Ask closedAt at once, not only at the first heartbeat (a resumed stream of a task that may be over). */
  checkAtOpen?: boolean;
  /** Status to send first (202-style headers are not possible once streaming). */
  headers?: Record<string, string>;
  /** The gateway is stopping (Drain.signal): the stream ends between events, and its client resumes elsewhere. */
  stop?: AbortSignal;
}

// eslint-disable-next-line max-lines-per-function -- one stream's state (closed, the last seq sent, the subscription) is shared by its send, fail, finish, heartbeat and end-check closures, each short
export async function streamTaskEvents(
  req: Request,
  res: Response,
  subscriber: EventSubscriber,
  logger: Logger,
  opts: StreamOptions,
): Promise<void> {
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
  let lastSent = opts.afterSeq;
  let checking = false;
  const checkEnd = async () => {
    if (!opts.closedAt || checking || closed) return;
    checking = true;
    try {
      const end = await opts.closedAt();
      if (end === undefined || closed) return;
      if (end <= lastSent)
        finish(); // nothing is left to send: the client has the end (or resumed past it)
      else sub?.catchUp(); // the terminal event is on the relay; make sure it reaches this client
    } catch (err) {
      logger.debug({ err: (err as Error).message, taskId: opts.taskId }, 'run end check failed; asking again later');
    } finally {
      checking = false;
    }
  };
  const heartbeat = setInterval(() => {
    if (closed) return;
    // A comment line alone, no blank line after it: a blank line ends an event, and clients that
    // do not follow the format to the letter (Agentbase's SDKs) then read an empty one, once an
    // event id is in force, and fail to parse it as JSON.
    res.write(': keep-alive\n');
    void checkEnd();
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
  if (opts.stop?.aborted) return finish();
  opts.stop?.addEventListener('abort', finish, { once: true });
  res.once('close', () => opts.stop?.removeEventListener('abort', finish));

  const send = (ev: AgentEvent) => {
    if (closed) return;
    res.write(`id: ${ev.seq}\ndata: ${JSON.stringify(ev)}\n\n`);
    lastSent = ev.seq;
    // A superseded terminal event ended a branch a rewind abandoned: the task goes on after it.
    if (TERMINAL_EVENTS.has(ev.type) && !ev.superseded) finish();
  };
  const fail = (err: Error) => {
    logger.warn({ err: err.message, taskId: opts.taskId }, 'event relay failed during a stream');
    if (!closed)
      res.write(
        `event: error\ndata: ${JSON.stringify({ error: { type: 'unavailable', message: 'the event relay is unavailable; reconnect with Last-Event-ID' } })}\n\n`,
      );
    finish();
  };
  try {
    sub = await subscriber.subscribe(opts.taskId, opts.afterSeq, send, fail);
    if (closed) sub.close();
    else if (opts.checkAtOpen) void checkEnd();
  } catch (err) {
    fail(err as Error);
  }
}

/**
 * A stream of one frame, then its end (no id: it is not one of the task's events). A background
 * run answers so a client that asked for events: Agentbase's SDKs always ask, and read only
 * frames, so a JSON body would tell them nothing, not even the task's id.
 */
export function sendOneEvent(res: Response, data: object): void {
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.end(`data: ${JSON.stringify(data)}\n\n`);
}

/** Where a client resumes: Last-Event-ID header (a seq this service sent: 400 otherwise), else ?after=, else the start. */
export function resumePoint(req: Request, after?: number): number {
  const header = req.header('last-event-id');
  if (header === undefined) return after ?? 0;
  if (!LAST_EVENT_ID.test(header))
    throw ValidationError.at(
      'header.Last-Event-ID',
      'the seq of an event of this stream (its id: line), 1 to 15 digits',
      'invalid_format',
    );
  return Number(header);
}
