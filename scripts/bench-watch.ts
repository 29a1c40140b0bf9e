// The bench's own view of the event relay: a pattern subscription on the
// stack's Redis to every task's event channel. It tells the bench when tasks
// end without polling the API (polling would add load to the very gateway
// being measured), and it timestamps when a token reached Redis pub/sub, which
// splits the relay overhead into the worker's hop and the gateway's hop.
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { CHANNEL_PREFIX, taskIdFromChannel } from '../src/relay/keys';
import type { AgentEvent } from '../src/relay/events';

export interface Ended {
  type: string;
  /** performance.now() when the terminal event was seen. */
  at: number;
}

export class RelayWatcher {
  readonly ended = new Map<string, Ended>();
  /** Extra per-event callback (the relay phase uses it); cheap when unset. */
  onEvent?: (ev: AgentEvent, at: number) => void;
  private readonly sub: Redis;
  private waiters: (() => void)[] = [];

  constructor(redisUrl: string) {
    this.sub = new Redis(redisUrl, { lazyConnect: true, connectionName: 'bench-watch' });
    this.sub.on('pmessage', (_pattern: string, channel: string, message: string) => {
      const at = performance.now();
      const taskId = taskIdFromChannel(channel);
      if (!taskId) return;
      let ev: AgentEvent;
      try {
        // `<publish ms> <JSON>`, as the relay publishes (src/relay/publisher.ts).
        ev = JSON.parse(message.startsWith('{') ? message : message.slice(message.indexOf(' ') + 1)) as AgentEvent;
      } catch {
        return;
      }
      this.onEvent?.(ev, at);
      if (ev.type === 'agent_completed' || ev.type === 'agent_error') {
        if (!this.ended.has(taskId)) this.ended.set(taskId, { type: ev.type, at });
        const ws = this.waiters;
        this.waiters = [];
        for (const w of ws) w();
      }
    });
  }

  async start(): Promise<void> {
    await this.sub.connect();
    await this.sub.psubscribe(`${CHANNEL_PREFIX}*`);
  }

  /** Resolves when every id has ended or the time is up; returns the ids still running. */
  async waitAll(ids: string[], timeoutMs: number, onProgress?: (ended: number) => void): Promise<string[]> {
    const end = performance.now() + timeoutMs;
    for (;;) {
      const missing = ids.filter((id) => !this.ended.has(id));
      onProgress?.(ids.length - missing.length);
      if (missing.length === 0 || performance.now() >= end) return missing;
      // Wake on the next terminal event, or every second to report progress.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(1000, Math.max(1, end - performance.now())));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /**
   * Unsubscribes until resume(). The subscription is an observer the service
   * does not have: Redis writes every event to it too, and this process wakes
   * for each one, on the very cores and event loop whose delays the relay row
   * measures. Tasks that end meanwhile are not seen.
   */
  async pause(): Promise<void> {
    await this.sub.punsubscribe();
  }

  async resume(): Promise<void> {
    await this.sub.psubscribe(`${CHANNEL_PREFIX}*`);
  }

  stop(): void {
    this.sub.disconnect();
  }
}
