// The engine: all namespaces, workflow runs and task queues of one server, and
// the primitives the feature modules build on (append events, timers, locks,
// durable flush). Every RPC runs its mutation synchronously and then awaits
// flush(), so nothing is acknowledged before it is durable.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock, TimerHandle } from '../clock';
import { namespaceNotFound, notFound, workflowNotFound } from '../errors';
import { EventType, WfStatus, tsFromMs } from '../proto';
import type { Store } from '../storage/store';
import { TaskQueues } from './matching';
import type { ClosedArchive } from './closed-archive';
import { toRecord } from './visibility-record';
import { Execution, HistoryEvent, execKey } from './state';
import { NamespaceRecord, newNamespace } from './namespaces';
import { serializeExecution, historyBatch, namespaceValue, owned, packHistory } from './persistence';
import { DEFAULT_LIMITS, Limits } from './limits';
import { stampTaskId } from './history-batches';

const EMPTY = Buffer.alloc(0);

export type Task =
  | { t: 'wft'; key: string; scheduledEventId: number; attempt: number }
  | { t: 'query'; key: string; queryId: string }
  | { t: 'act'; key: string; scheduledEventId: number; attempt: number }
  /** An attempt of a standalone activity (activity-executions.ts). */
  | { t: 'sact'; key: string; attempt: number };

export type PollResponse = Record<string, any>;

/** In-memory companions of a run that are never persisted. */
export interface RunSide {
  timers: Map<string, TimerHandle>;
  locks: Map<string, () => void>;
  waiters: Set<() => void>;
  /** Events already written to the log (in memory: already counted in historySizeBytes). */
  persistedEvents: number;
  /**
   * The run exactly as the log holds it (its last state put and every history
   * batch appended), kept so a compaction snapshot is references, not a
   * re-encoding of every run. Absent for runs not tracked from their first
   * write (read back from the archive): those are encoded when snapshotted.
   */
  encoded?: { state: Buffer; history: Buffer[] };
  queries: Map<string, import('./queries').PendingQuery>;
  updates: Map<string, import('./updates').PendingUpdate>;
  /** A batch of events is open: appended since the last flush, not yet cut by a task's started event (history-batches.ts). */
  txOpen?: boolean;
}

export interface EngineOptions {
  clock: Clock;
  logger: Logger;
  store: Store;
  /** Long-poll expiry for task polls. Default 60 s, like the real server. */
  pollTimeoutMs?: number;
  /** Long-poll expiry for history waits. Default 20 s. */
  historyWaitMs?: number;
  /** Size and count limits (limits.ts); the real server's defaults when absent. */
  limits?: Limits;
}

export class Engine {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly pollTimeoutMs: number;
  readonly historyWaitMs: number;
  readonly limits: Limits;
  readonly namespaces = new Map<string, NamespaceRecord>();
  readonly executions = new Map<string, Execution>();
  /** namespace\0workflowId -> runId of the newest run */
  readonly current = new Map<string, string>();
  readonly side = new Map<string, RunSide>();
  readonly matching: TaskQueues<Task, PollResponse>;
  private readonly dirty = new Set<Execution>();
  private readonly dirtyNamespaces = new Set<NamespaceRecord>();
  private readonly extraMutations: import('../storage/store').Mutation[] = [];
  private lastWrite: Promise<void> = Promise.resolve();
  /** Closed runs moved out of memory (only with a durable log). */
  archive?: ClosedArchive;
  /** How many closed runs stay in memory before the oldest go to the archive. */
  maxClosedInMemory = 1000;
  private readonly closedInMemory = new Set<string>();
  /** Registered by feature modules: turns a queued task into a poll response. */
  dispatchers: { [K in Task['t']]?: (task: Extract<Task, { t: K }>, identity: string) => PollResponse | undefined } =
    {};
  /** Hooks run when a run closes (parent notification, cron, schedules...). */
  readonly closeHooks: ((e: Execution) => void)[] = [];
  readonly closedListeners = new Set<(e: Execution) => void>();

  constructor(opts: EngineOptions) {
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.store = opts.store;
    this.pollTimeoutMs = opts.pollTimeoutMs ?? 60_000;
    this.historyWaitMs = opts.historyWaitMs ?? 20_000;
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.matching = new TaskQueues<Task, PollResponse>((task, identity) => {
      const d = this.dispatchers[task.t] as ((t: Task, id: string) => PollResponse | undefined) | undefined;
      return d ? d(task, identity) : undefined;
    });
  }

  now(): number {
    return this.frozenAt ?? this.clock.now();
  }

  /** While `fn` runs (synchronously), now() is one instant: times computed and recorded in it agree to the millisecond. */
  atOneInstant<T>(fn: () => T): T {
    if (this.frozenAt !== undefined) return fn();
    this.frozenAt = this.clock.now();
    try {
      return fn();
    } finally {
      this.frozenAt = undefined;
    }
  }
  private frozenAt?: number;

  newId(): string {
    return randomUUID();
  }

  // ---- namespaces -------------------------------------------------------

  ensureNamespace(name: string, retentionMs = 24 * 3600_000): NamespaceRecord {
    let ns = this.namespaces.get(name);
    if (!ns) {
      ns = newNamespace(name, retentionMs);
      this.namespaces.set(name, ns);
      this.markNamespaceDirty(ns);
    }
    return ns;
  }

  namespace(name: string | undefined): NamespaceRecord {
    const ns = name ? this.namespaces.get(name) : undefined;
    if (!ns) throw namespaceNotFound(name ?? '');
    return ns;
  }

  namespaceById(id: string): NamespaceRecord | undefined {
    for (const ns of this.namespaces.values()) if (ns.id === id) return ns;
    return undefined;
  }

  markNamespaceDirty(ns: NamespaceRecord): void {
    this.dirtyNamespaces.add(ns);
  }

  // ---- runs -------------------------------------------------------------

  sideOf(e: Execution): RunSide {
    const k = execKey(e.namespace, e.workflowId, e.runId);
    let s = this.side.get(k);
    if (!s) {
      s = {
        timers: new Map(),
        locks: new Map(),
        waiters: new Set(),
        persistedEvents: 0,
        queries: new Map(),
        updates: new Map(),
      };
      this.side.set(k, s);
    }
    return s;
  }

  key(e: Execution): string {
    return execKey(e.namespace, e.workflowId, e.runId);
  }

  byKey(key: string): Execution | undefined {
    return this.run(key);
  }

  /** A run by key, read back from the archive when it was moved out of memory. */
  run(key: string): Execution | undefined {
    const e = this.executions.get(key);
    if (e || !this.archive?.has(key)) return e;
    const { e: loaded, state, history } = this.archive.read(key)!;
    this.archive.delete(key);
    this.executions.set(key, loaded);
    const side = this.sideOf(loaded);
    // Everything it has is on disk already: a later change must not re-append it.
    side.persistedEvents = loaded.nextEventId - 1;
    side.encoded = { state, history: [history] };
    this.closedInMemory.add(key);
    return loaded;
  }

  currentRun(namespace: string, workflowId: string): Execution | undefined {
    const runId = this.current.get(`${namespace}\u0000${workflowId}`);
    return runId ? this.run(execKey(namespace, workflowId, runId)) : undefined;
  }

  /** Finds a run; an empty runId means the newest run. Throws NOT_FOUND like the real frontend. */
  getRun(namespace: string, workflowId: string | undefined, runId?: string): Execution {
    this.namespace(namespace);
    if (!workflowId) throw workflowNotFound('');
    const e = runId ? this.run(execKey(namespace, workflowId, runId)) : this.currentRun(namespace, workflowId);
    if (!e) throw workflowNotFound(workflowId, runId);
    return e;
  }

  addRun(e: Execution): void {
    this.executions.set(this.key(e), e);
    this.current.set(`${e.namespace}\u0000${e.workflowId}`, e.runId);
    this.markDirty(e);
  }

  markDirty(e: Execution): void {
    e.stateTransitions++;
    this.dirty.add(e);
  }

  addMutation(m: import('../storage/store').Mutation): void {
    this.extraMutations.push(m);
  }

  // ---- history ----------------------------------------------------------

  /** A history event with id/time filled in later by appendEvent. */
  event(eventType: number, attrName: string, attrs: object): HistoryEvent {
    return { eventId: 0, eventType, [attrName]: attrs } as HistoryEvent;
  }

  /**
   * Appends directly to history (ignores buffering). Returns the event id. Its time is now, unless
   * the event already carries the time it happened (an activity's started event, written with its
   * outcome; a transient workflow task's events).
   */
  appendEvent(e: Execution, ev: HistoryEvent): number {
    ev.eventId = e.nextEventId++;
    ev.eventTime ??= tsFromMs(this.now());
    ev.version = 0;
    stampTaskId(e.history, this.sideOf(e), ev);
    e.history.push(ev);
    this.markDirty(e);
    this.notifyHistory(e);
    return ev.eventId;
  }

  /**
   * Adds an event that the workflow must see: written now when no workflow task is
   * running, else buffered until the running task ends (the real server's rule).
   */
  addWorkflowEvent(e: Execution, ev: HistoryEvent): void {
    if (e.wft?.startedEventId !== undefined) {
      e.buffered.push(ev);
      this.markDirty(e);
    } else this.appendEvent(e, ev);
  }

  flushBuffered(e: Execution): number {
    const n = e.buffered.length;
    const events = e.buffered.splice(0);
    for (const ev of events) {
      const link = (ev as any).__startedFromPrev;
      if (link) {
        ev[link].startedEventId = e.nextEventId - 1;
        delete (ev as any).__startedFromPrev;
      }
      this.appendEvent(e, ev);
    }
    return n;
  }

  notifyHistory(e: Execution): void {
    const s = this.side.get(this.key(e));
    if (!s || s.waiters.size === 0) return;
    const ws = [...s.waiters];
    s.waiters.clear();
    // After the current mutation completes, so waiters see a consistent run.
    queueMicrotask(() => ws.forEach((w) => w()));
  }

  // ---- timers and time-skipping locks ---------------------------------------

  setTimer(e: Execution, name: string, at: number, fn: (e: Execution) => void): void {
    const side = this.sideOf(e);
    side.timers.get(name)?.cancel();
    const key = this.key(e);
    side.timers.set(
      name,
      this.clock.at(at, () => {
        side.timers.delete(name);
        const run = this.executions.get(key);
        if (!run) return;
        try {
          fn(run);
        } catch (err) {
          this.logger.error({ err, timer: name, workflowId: run.workflowId }, 'timer callback failed');
        }
        void this.flush().catch((err) => this.logger.error({ err }, 'flush after timer failed'));
      }),
    );
  }

  clearTimer(e: Execution, name: string): void {
    const side = this.side.get(this.key(e));
    const t = side?.timers.get(name);
    if (t) {
      t.cancel();
      side!.timers.delete(name);
    }
  }

  hold(e: Execution, name: string): void {
    const side = this.sideOf(e);
    if (!side.locks.has(name)) side.locks.set(name, this.clock.lock());
  }

  release(e: Execution, name: string): void {
    const side = this.side.get(this.key(e));
    const unlock = side?.locks.get(name);
    if (unlock) {
      side!.locks.delete(name);
      unlock();
    }
  }

  /** Drops every timer and lock of a closed run. */
  releaseAll(e: Execution): void {
    const side = this.side.get(this.key(e));
    if (!side) return;
    side.timers.forEach((t) => t.cancel());
    side.timers.clear();
    side.locks.forEach((u) => u());
    side.locks.clear();
  }

  // ---- close ------------------------------------------------------------

  /** Marks the run closed; the close event must already be appended. */
  closeRun(e: Execution, status: number): void {
    e.status = status;
    e.closeTime = this.now();
    e.wft = undefined;
    this.releaseAll(e);
    this.markDirty(e);
    for (const hook of this.closeHooks) hook(e);
    for (const l of this.closedListeners) l(e);
  }

  isOpen(e: Execution): boolean {
    return e.status === WfStatus.RUNNING;
  }

  // ---- durability ---------------------------------------------------------

  /** Makes every mutation so far durable; resolves once it is (and all before it). */
  flush(): Promise<void> {
    this.beforeCommit(this.dirty);
    if (this.dirty.size === 0 && this.dirtyNamespaces.size === 0 && this.extraMutations.length === 0)
      return this.lastWrite;
    if (!this.store.persistent) {
      for (const e of this.dirty) {
        // Nothing is written in memory, but the run's HistorySizeBytes is still the size
        // its events encode to, so new events are encoded once for their size.
        const side = this.sideOf(e);
        side.txOpen = false;
        const written = e.nextEventId - 1;
        if (written > side.persistedEvents) {
          e.historySizeBytes += historyBatch(e.history.slice(side.persistedEvents, written)).length;
          side.persistedEvents = written;
        }
        if (e.status !== WfStatus.RUNNING) packHistory(e);
      }
      this.dirty.clear();
      this.dirtyNamespaces.clear();
      this.extraMutations.length = 0;
      return this.lastWrite;
    }
    const batch: import('../storage/store').Mutation[] = [];
    for (const ns of this.dirtyNamespaces) batch.push({ op: 'put', key: `n/${ns.name}`, value: namespaceValue(ns) });
    this.dirtyNamespaces.clear();
    for (const e of this.dirty) {
      const side = this.sideOf(e);
      side.txOpen = false;
      const key = this.key(e);
      // Tracked from the first write only, so `encoded` is always the whole run.
      const encoded =
        side.encoded ?? (side.persistedEvents === 0 ? (side.encoded = { state: EMPTY, history: [] }) : undefined);
      if (e.history.length > side.persistedEvents) {
        const appended = owned(historyBatch(e.history.slice(side.persistedEvents)));
        // The real server's history size is the sum of its stored batches, as here.
        e.historySizeBytes += appended.length;
        batch.push({ op: 'append', key: `h/${key}`, value: appended });
        encoded?.history.push(appended);
        side.persistedEvents = e.history.length;
      }
      const state = owned(serializeExecution(e));
      batch.push({ op: 'put', key: `h/${key}`, value: state });
      if (encoded) encoded.state = state;
      if (e.status !== WfStatus.RUNNING) {
        // Encoded history batches concatenate into one valid encoding of them all.
        if (encoded)
          encoded.history = [encoded.history.length === 1 ? encoded.history[0] : owned(Buffer.concat(encoded.history))];
        packHistory(e, encoded?.history[0]);
        this.closedInMemory.add(key);
      }
    }
    this.dirty.clear();
    this.evictClosed();
    batch.push(...this.extraMutations.splice(0));
    this.lastWrite = this.store.write(batch);
    // Right after a write nothing is dirty, so memory equals what is on disk: the
    // one moment a compaction snapshot cannot duplicate or miss events. Writes
    // do not wait for it; a failed one leaves the old log, which holds everything.
    if (this.store.shouldCompact()) {
      void this.store
        .compact(this.liveState())
        .catch((err) => this.logger.warn({ err }, 'compaction of the durable log failed; will retry as it grows'));
    }
    return this.lastWrite;
  }

  /** Counts a closed run recovered at start towards maxClosedInMemory (oldest first), so it can be archived. */
  trackClosed(e: Execution): void {
    this.closedInMemory.add(this.key(e));
  }

  /** Moves the oldest closed runs beyond maxClosedInMemory to the archive (all durable by now). */
  evictClosed(): void {
    if (!this.archive) return;
    for (const key of this.closedInMemory) {
      if (this.closedInMemory.size <= this.maxClosedInMemory) return;
      this.closedInMemory.delete(key);
      const e = this.executions.get(key);
      if (!e || e.status === WfStatus.RUNNING || this.dirty.has(e)) continue;
      const side = this.side.get(key);
      // Runs with someone waiting on them (queries, long polls) stay until they are done.
      if (side && (side.queries.size || side.waiters.size || side.updates.size)) {
        this.closedInMemory.add(key);
        continue;
      }
      const enc = side?.encoded;
      this.archive.put(
        key,
        e,
        toRecord(e),
        enc?.history.length === 1 ? { state: enc.state, history: enc.history[0] } : undefined,
      );
      this.executions.delete(key);
      this.side.delete(key);
    }
  }

  /** Forgets a run everywhere (retention). */
  forget(key: string): void {
    this.executions.delete(key);
    this.side.delete(key);
    this.closedInMemory.delete(key);
    this.archive?.delete(key);
  }

  /**
   * Sees every flush's changed runs before they are written (the history limits,
   * history-limits.ts): the last moment a change can still be taken back.
   */
  beforeCommit: (dirty: ReadonlySet<Execution>) => void = () => undefined;

  /** Supplied by recovery.ts (kept there to avoid a dependency cycle). */
  liveState: () => Iterable<import('../storage/store').Mutation> = () => [];

  requireTaskRun(namespace: string, workflowId: string, runId: string): Execution {
    const e = this.executions.get(execKey(namespace, workflowId, runId));
    if (!e) throw notFound('workflow execution not found');
    return e;
  }

  static readonly EventType = EventType;
}
