// A task's event stream as an async iterator of typed events that survives
// dropped connections: it remembers the seq of the last event (the SSE `id:`)
// and, when the connection breaks before the task's terminal event, comes back
// on GET /tasks/{id}/events with Last-Event-ID after a short backoff. The
// service's relay numbers events gap-free per task, so resuming after the last
// seq seen yields every event exactly once; seqs at or below it are dropped in
// case a server replays them.
import type { AgentEvent } from './types';
import { AgentApiError, ConnectionError, InternalServerError, RateLimitError, ServiceUnavailableError } from './errors';
import type { HttpCore, OpenResponse, RequestOptions, SendOptions } from './http';
import { SseParser } from './sse-parser';

/** Events after which the service ends a task's stream (src/common/relay/events.ts TERMINAL_EVENTS). */
const TERMINAL = new Set<string>(['agent_completed', 'agent_error']);

export interface StreamOptions extends RequestOptions {
  /** Failed reconnections in a row before the stream gives up with a ConnectionError. Default 8. */
  maxReconnects?: number;
  /** First reconnection delay in ms, doubled per failed attempt up to 5 s. Default 250, or the server's `retry:`. */
  reconnectDelayMs?: number;
  /** No byte at all (the service sends heartbeats) for this long counts as a dropped connection. Default 60 s; 0: never. */
  idleTimeoutMs?: number;
  /** Told before each reconnection (a CLI shows it). */
  onReconnect?: (info: { attempt: number; lastEventId: number; error: unknown }) => void;
}

const MAX_DELAY_MS = 5_000;

/** How the stream is opened the first time (POST / or GET /tasks/{id}/events). */
export interface FirstRequest extends SendOptions {
  method: string;
  path: string;
  /** Known for GET /tasks/{id}/events; a POST learns it from X-Task-Id. */
  taskId?: string;
  /** Resume point of the first request (events after this seq). */
  after?: number;
}

export class EventStream implements AsyncIterable<AgentEvent> {
  /** The task whose events these are. */
  taskId: string | undefined;
  /** The session (X-Session-Id of POST /, else from the events). */
  session: string | undefined;
  /** Seq of the last event handed out: where a reconnection resumes. */
  lastEventId: number;
  /** Reconnections made so far. */
  reconnects = 0;
  private retryMs: number;
  private iterating = false;

  private constructor(
    private readonly core: HttpCore,
    private first: OpenResponse | undefined,
    private readonly stopper: AbortController,
    private readonly detach: () => void,
    private readonly opts: StreamOptions,
    after: number,
  ) {
    this.lastEventId = after;
    this.retryMs = opts.reconnectDelayMs ?? 250;
    this.taskId = first?.response.headers.get('x-task-id') ?? undefined;
    this.session = first?.response.headers.get('x-session-id') ?? undefined;
  }

  /** Opens the first request; resolves once its headers are in (so a 400 or 404 throws here). */
  static async open(core: HttpCore, req: FirstRequest, opts: StreamOptions = {}): Promise<EventStream> {
    // One controller for every connection of the stream: the caller's signal and close() both end it.
    const stopper = new AbortController();
    const onAbort = () => stopper.abort(opts.signal?.reason);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const detach = () => opts.signal?.removeEventListener('abort', onAbort);
    const { method, path, taskId, after, ...send } = req;
    let first: OpenResponse;
    try {
      first = await core.open(method, path, {
        ...send,
        signal: stopper.signal,
        timeoutMs: opts.timeoutMs,
        accept: 'text/event-stream',
      });
      checkEventStream(first);
    } catch (err) {
      detach();
      throw err;
    }
    const stream = new EventStream(core, first, stopper, detach, opts, after ?? 0);
    stream.taskId ??= taskId;
    return stream;
  }

  /** Ends the stream: the open connection is closed and iteration stops without an error. */
  close(): void {
    this.stopper.abort(new Error('stream closed'));
    this.first?.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    if (this.iterating) throw new Error('an EventStream can be iterated once');
    this.iterating = true;
    return this.iterate();
  }

  private async *iterate(): AsyncGenerator<AgentEvent> {
    try {
      yield* this.run();
    } finally {
      this.detach();
      this.first?.close();
    }
  }

  // eslint-disable-next-line max-lines-per-function -- one generator's read-and-reconnect loop: its connection, failure count and resume point are the loop's own state, and a yield cannot move into a helper
  private async *run(): AsyncGenerator<AgentEvent> {
    let failures = 0;
    let conn = this.first;
    this.first = undefined;
    for (;;) {
      let error: unknown;
      if (conn) {
        const current = conn;
        let relayFailed = false;
        try {
          for await (const frame of this.frames(current)) {
            if (frame.event === 'error') {
              // The relay failed mid-stream; the service ends this response and asks for a reconnection.
              relayFailed = true;
              continue;
            }
            if (frame.event !== 'message') continue;
            const ev = parseEvent(frame.data);
            this.taskId ??= ev.task_id;
            this.session ??= ev.session;
            if (ev.seq <= this.lastEventId) continue;
            this.lastEventId = ev.seq;
            failures = 0;
            yield ev;
            if (TERMINAL.has(ev.type) && !ev.superseded) return; // a superseded end was a rewound branch's
          }
          // The server ended the stream cleanly: nothing more will come (e.g. resumed past a finished task's end).
          if (!relayFailed) return;
          error = new ServiceUnavailableError(
            503,
            'unavailable',
            'the event relay failed mid-stream',
            null,
            new Headers(),
          );
        } catch (err) {
          if (this.stopper.signal.aborted) return this.stopped();
          if (err instanceof AgentApiError && err.type === 'invalid_event') throw err;
          error = err;
        } finally {
          current.close();
        }
      }
      // Dropped (or a reconnection failed): come back where the last event left off.
      if (this.taskId === undefined)
        throw new ConnectionError('the stream broke before the service named its task; it cannot be resumed', {
          cause: error,
        });
      failures++;
      if (failures > (this.opts.maxReconnects ?? 8))
        throw new ConnectionError(
          `the event stream of ${this.taskId} could not be resumed after ${failures - 1} attempts`,
          { cause: error },
        );
      this.opts.onReconnect?.({ attempt: failures, lastEventId: this.lastEventId, error });
      const retryAfter =
        error instanceof ServiceUnavailableError && error.retryAfter !== undefined ? error.retryAfter * 1000 : 0;
      await this.sleep(Math.max(retryAfter, Math.min(this.retryMs * 2 ** (failures - 1), MAX_DELAY_MS)));
      if (this.stopper.signal.aborted) return this.stopped();
      this.reconnects++;
      conn = undefined;
      try {
        conn = await this.core.open('GET', `/tasks/${encodeURIComponent(this.taskId)}/events`, {
          accept: 'text/event-stream',
          headers: { 'last-event-id': String(this.lastEventId) },
          signal: this.stopper.signal,
          timeoutMs: this.opts.timeoutMs,
        });
        checkEventStream(conn);
      } catch (err) {
        if (this.stopper.signal.aborted) return this.stopped();
        // Only what a later attempt can fix is retried; a 404 or 401 will not change.
        if (!(err instanceof ConnectionError || err instanceof InternalServerError || err instanceof RateLimitError))
          throw err;
        conn = undefined;
      }
    }
  }

  /** The end of an iteration the caller stopped: its abort reason is thrown, close() ends quietly. */
  private stopped(): void {
    if (this.opts.signal?.aborted) throw this.opts.signal.reason;
  }

  /** The frames of one connection; comments and retry hints are handled here. */
  private async *frames(conn: OpenResponse): AsyncGenerator<{ event: string; data: string }> {
    const body = conn.response.body;
    if (!body) return;
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    const idleMs = this.opts.idleTimeoutMs ?? 60_000;
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      if (!idleMs) return;
      clearTimeout(idle);
      idle = setTimeout(() => conn.close(), idleMs);
    };
    arm();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm(); // any byte, heartbeats included, proves the connection alive
        for (const item of parser.feed(decoder.decode(value, { stream: true }))) {
          if (item.kind === 'retry') this.retryMs = item.ms;
          else if (item.kind === 'event') yield item;
        }
      }
    } finally {
      clearTimeout(idle);
      reader.releaseLock();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stopper.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopper.signal.addEventListener('abort', done, { once: true });
    });
  }
}

function checkEventStream(conn: OpenResponse): void {
  const type = conn.response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    conn.close();
    throw new AgentApiError(
      conn.response.status,
      'unexpected_response',
      `expected an event stream, got ${type || 'no content type'}`,
      null,
      conn.response.headers,
    );
  }
}

function parseEvent(data: string): AgentEvent {
  let ev: unknown;
  try {
    ev = JSON.parse(data);
  } catch {
    ev = undefined;
  }
  const e = ev as Partial<AgentEvent> | undefined;
  if (!e || typeof e.type !== 'string' || typeof e.seq !== 'number') {
    throw new AgentApiError(
      undefined,
      'invalid_event',
      `the service sent an event that is not an agent event: ${data.slice(0, 200)}`,
    );
  }
  return e as AgentEvent;
}
