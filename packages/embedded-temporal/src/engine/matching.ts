// Task queues: pending tasks waiting for pollers, and pollers waiting for tasks
// (long poll). A task is only a reference; whether it is still valid is decided at
// dispatch time by the engine (a task may have been cancelled or timed out while
// queued), exactly like the real matching service's "task is stale" check.

export type TaskKind = 'workflow' | 'activity';

export interface Waiter<R> {
  /** Tries to hand the task over; returns the poll response, or undefined if stale. */
  resolve(response: R | undefined): void;
  done: boolean;
  /** The worker polling: its task's started event names it. */
  identity: string;
  /** The polling worker's instance key (newer SDKs send one): ShutdownWorker ends its polls. */
  workerKey?: string;
}

/** How long a shut-down worker's key is remembered: a poll it sends meanwhile gets no task. */
const SHUT_DOWN_KEY_TTL_MS = 60_000;

interface Queue<T, R> {
  tasks: T[];
  pollers: Waiter<R>[];
  lastPollTime: number;
  lastIdentity?: string;
  /** A hand-over of queued tasks to waiting pollers is due on the next turn. */
  handOverScheduled?: boolean;
}

export class TaskQueues<T, R> {
  private readonly queues = new Map<string, Queue<T, R>>();
  /** Worker instance keys that said ShutdownWorker, with when they are forgotten. */
  private readonly shutDown = new Map<string, number>();

  constructor(private readonly dispatch: (task: T, identity: string) => R | undefined) {}

  private key(namespace: string, kind: TaskKind, name: string): string {
    return `${namespace}\u0000${kind}\u0000${name}`;
  }

  private queue(namespace: string, kind: TaskKind, name: string): Queue<T, R> {
    const k = this.key(namespace, kind, name);
    let q = this.queues.get(k);
    if (!q) {
      q = { tasks: [], pollers: [], lastPollTime: 0 };
      this.queues.set(k, q);
    }
    return q;
  }

  /**
   * Adds a task. A waiting poller gets it on the next turn of the event loop,
   * not inside the call that created it: like the real server, whose matching
   * service learns of a task only after the history service has persisted it
   * and answered, the caller's answer (a start, a signal, a task completion)
   * goes out before the worker is woken with the work it causes.
   */
  add(namespace: string, kind: TaskKind, name: string, task: T): void {
    const q = this.queue(namespace, kind, name);
    q.tasks.push(task);
    if (q.pollers.length && !q.handOverScheduled) {
      q.handOverScheduled = true;
      setImmediate(() => this.handOver(q));
    }
  }

  private handOver(q: Queue<T, R>): void {
    q.handOverScheduled = false;
    while (q.tasks.length && q.pollers.length) {
      const poller = q.pollers.shift()!;
      if (poller.done) continue;
      const res = this.dispatch(q.tasks.shift()!, poller.identity);
      if (res === undefined) {
        q.pollers.unshift(poller); // the task went stale meanwhile: dropped, the poller waits on
        continue;
      }
      poller.done = true;
      poller.resolve(res);
    }
  }

  /**
   * Long-polls for a task. Resolves with a response, or undefined when the poll
   * expires or is cancelled (the SDK then simply polls again).
   */
  poll(
    namespace: string,
    kind: TaskKind,
    name: string,
    identity: string,
    timeoutMs: number,
    cancelled: Promise<void>,
    workerKey?: string,
  ): Promise<R | undefined> {
    if (workerKey && this.isShutDown(workerKey)) return Promise.resolve(undefined);
    const q = this.queue(namespace, kind, name);
    q.lastPollTime = Date.now();
    q.lastIdentity = identity;
    while (q.tasks.length) {
      const task = q.tasks.shift()!;
      const res = this.dispatch(task, identity);
      if (res !== undefined) return Promise.resolve(res);
    }
    return new Promise<R | undefined>((resolve) => {
      const waiter: Waiter<R> = { done: false, resolve, identity, workerKey };
      const timer = setTimeout(() => finish(), timeoutMs);
      const finish = () => {
        if (waiter.done) return;
        waiter.done = true;
        const i = q.pollers.indexOf(waiter);
        if (i >= 0) q.pollers.splice(i, 1);
        resolve(undefined);
      };
      waiter.resolve = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
      q.pollers.push(waiter);
      void cancelled.then(() => {
        clearTimeout(timer);
        finish();
      });
    });
  }

  /**
   * A worker going away (ShutdownWorker with its instance key): its waiting polls
   * end empty now, and polls it sends for a while get nothing. An SDK that sees the
   * namespace capability workerPollCompleteOnShutdown then leaves its polls to us
   * instead of cancelling them, so no task is handed to a poll the worker has
   * already given up on (such a task would wait out its start-to-close timeout).
   */
  shutdownWorker(workerKey: string): void {
    const now = Date.now();
    for (const [k, until] of this.shutDown) if (until <= now) this.shutDown.delete(k);
    this.shutDown.set(workerKey, now + SHUT_DOWN_KEY_TTL_MS);
    for (const q of this.queues.values()) {
      for (const p of q.pollers) {
        if (!p.done && p.workerKey === workerKey) {
          p.done = true;
          p.resolve(undefined);
        }
      }
      q.pollers = q.pollers.filter((p) => !p.done);
    }
  }

  private isShutDown(workerKey: string): boolean {
    const until = this.shutDown.get(workerKey);
    return until !== undefined && until > Date.now();
  }

  /** Moves every queued task of one queue to another (sticky worker went away). */
  drainTo(namespace: string, kind: TaskKind, from: string, redirect: (task: T) => void): void {
    const k = this.key(namespace, kind, from);
    const q = this.queues.get(k);
    if (!q) return;
    const tasks = q.tasks.splice(0);
    for (const p of q.pollers) {
      if (!p.done) {
        p.done = true;
        p.resolve(undefined);
      }
    }
    this.queues.delete(k);
    tasks.forEach(redirect);
  }

  hasPollers(namespace: string, kind: TaskKind, name: string): boolean {
    const q = this.queues.get(this.key(namespace, kind, name));
    return !!q && q.pollers.some((p) => !p.done);
  }

  backlog(namespace: string, kind: TaskKind, name: string): number {
    return this.queues.get(this.key(namespace, kind, name))?.tasks.length ?? 0;
  }

  describe(namespace: string, kind: TaskKind, name: string): { lastPollTime: number; identity?: string } | undefined {
    const q = this.queues.get(this.key(namespace, kind, name));
    return q ? { lastPollTime: q.lastPollTime, identity: q.lastIdentity } : undefined;
  }

  /** Ends every waiting poll (server shutdown). */
  closeAll(): void {
    for (const q of this.queues.values()) {
      for (const p of q.pollers) {
        if (!p.done) {
          p.done = true;
          p.resolve(undefined);
        }
      }
      q.pollers = [];
    }
  }
}
