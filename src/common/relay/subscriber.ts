// The gateway side of the relay: one Redis subscriber connection per gateway
// process, shared by every SSE client. A client first subscribes to the task's
// channel, then catches up from the stream, then receives live events; gaps
// (a message missed while catching up, a reconnect) are filled from the stream,
// so each client sees every event once, in seq order.
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { AgentEvent } from './events';
import { keys, taskIdFromChannel } from './keys';
import { withTimeout } from '../timeout';
import { markSuperseded, parseSuperseded } from './rewind';

const SUBSCRIBE_TIMEOUT_MS = 2000;

export interface Subscription {
  close(): void;
  /** Reads the stream for anything not delivered yet (a pub/sub message may have been missed). */
  catchUp(): void;
}

interface Listener {
  last: number;
  deliver(ev: AgentEvent): void;
  fail(err: Error): void;
  /** Serialises catch-up reads with live delivery. */
  chain: Promise<void>;
  closed: boolean;
  /** Seq ranges of branches rewinds abandoned (read at the start, then from agent_rewound events). */
  superseded: [number, number][];
}

/** Told of each live event written to a client: seconds since its publisher published it. */
export type RelayLagObserver = (seconds: number) => void;

export class EventSubscriber {
  private readonly listeners = new Map<string, Set<Listener>>();
  private listening = 0;

  constructor(
    private readonly redis: Redis,
    private readonly sub: Redis,
    private readonly logger: Logger,
    private readonly onLag?: RelayLagObserver,
  ) {
    sub.on('message', (channel: string, message: string) => this.onMessage(channel, message));
  }

  /**
   * Streams the task's events with seq > afterSeq to `deliver`, in order, once.
   * Resolves after the catch-up read is queued; errors (Redis down) go to `fail`.
   */
  async subscribe(
    taskId: string,
    afterSeq: number,
    deliver: (ev: AgentEvent) => void,
    fail: (err: Error) => void,
  ): Promise<Subscription> {
    const l: Listener = { last: afterSeq, deliver, fail, chain: Promise.resolve(), closed: false, superseded: [] };
    // First on the listener's chain, before any event is delivered (catch-up and live alike): the
    // ranges rewinds superseded, so an event of an abandoned branch is delivered marked as such.
    l.chain = withTimeout(this.redis.hget(keys.producers(taskId), 'sup'), SUBSCRIBE_TIMEOUT_MS, 'redis gave no answer')
      .then((raw) => void (l.superseded = parseSuperseded(raw)))
      .catch((err: Error) => {
        if (!l.closed) l.fail(err);
      });
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
      try {
        // A frozen Redis takes the command and never answers: the stream fails rather than hangs.
        await withTimeout(this.sub.subscribe(keys.channel(taskId)), SUBSCRIBE_TIMEOUT_MS, 'redis gave no answer');
      } catch (err) {
        if (set.size === 0) this.listeners.delete(taskId);
        throw err;
      }
    }
    set.add(l);
    this.listening++;
    this.catchUp(taskId, l, Infinity);
    return { close: () => this.remove(taskId, l), catchUp: () => this.catchUp(taskId, l, Infinity) };
  }

  private remove(taskId: string, l: Listener): void {
    l.closed = true;
    const set = this.listeners.get(taskId);
    if (!set?.delete(l)) return;
    this.listening--;
    if (set.size === 0) {
      this.listeners.delete(taskId);
      this.sub.unsubscribe(keys.channel(taskId)).catch(() => undefined);
    }
  }

  /** Reads the stream after the listener's last seq (up to `until`) and delivers it. */
  private catchUp(taskId: string, l: Listener, until: number): void {
    l.chain = l.chain.then(async () => {
      if (l.closed || l.last >= until) return;
      try {
        const end = until === Infinity ? '+' : `${until}-0`;
        const rows = await this.redis.xrange(keys.events(taskId), `(${l.last}-0`, end);
        for (const [, fields] of rows) this.emit(l, JSON.parse(fields[1]) as AgentEvent);
      } catch (err) {
        if (!l.closed) l.fail(err as Error);
      }
    });
  }

  private emit(l: Listener, ev: AgentEvent): void {
    if (l.closed || ev.seq <= l.last) return;
    l.last = ev.seq;
    if (ev.type === 'agent_rewound' && ev.superseded_seqs)
      l.superseded.push([ev.superseded_seqs.from_seq, ev.superseded_seqs.to_seq]);
    l.deliver(l.superseded.length ? markSuperseded(ev, l.superseded) : ev);
  }

  private onMessage(channel: string, message: string): void {
    const taskId = taskIdFromChannel(channel);
    const set = taskId ? this.listeners.get(taskId) : undefined;
    if (!set || !taskId) return;
    let ev: AgentEvent;
    // `<publish ms> <JSON>` (publisher.ts); a bare JSON message carries no time.
    const space = message.startsWith('{') ? -1 : message.indexOf(' ');
    const publishedAt = space > 0 ? Number(message.slice(0, space)) : NaN;
    try {
      ev = JSON.parse(space > 0 ? message.slice(space + 1) : message) as AgentEvent;
    } catch {
      this.logger.warn({ channel }, 'malformed relay message ignored');
      return;
    }
    for (const l of set) {
      l.chain = l.chain.then(() => {
        if (ev.seq === l.last + 1) {
          const open = !l.closed;
          this.emit(l, ev);
          // Written to the client just now (deliver writes synchronously; a terminal event closes the listener).
          if (open && this.onLag && Number.isFinite(publishedAt))
            this.onLag(Math.max(0, Date.now() - publishedAt) / 1000);
        } else if (ev.seq > l.last + 1) {
          // Missed something (arrived during catch-up): fill from the stream.
          this.catchUp(taskId, l, ev.seq);
        }
      });
    }
  }

  /** Number of tasks with live listeners (for metrics and tests). */
  get activeTasks(): number {
    return this.listeners.size;
  }

  /** Number of listeners (each an SSE client's stream), across tasks. */
  get clients(): number {
    return this.listening;
  }
}
