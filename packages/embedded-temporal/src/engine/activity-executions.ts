// The standalone activity executions of one engine: where they are kept, made
// durable (one JSON value per run, as the scheduler keeps schedules), found by
// id, timed (their own timers and time-skipping locks) and expired. What happens
// to them lives in activity-transitions.ts.
import type { Engine } from './engine';
import type { TimerHandle } from '../clock';
import type { RecoveredEntry } from '../storage/store';
import { ActivityRun, activityKey, isRunning } from './activity-run';
import { fromJsonBuffer, toJsonBuffer } from './persistence';
import { notFound } from '../errors';

const PREFIX = 'sa/';
const RETENTION_SWEEP_MS = 60_000;

export class ActivityExecutions {
  readonly runs = new Map<string, ActivityRun>();
  /** namespace\0activityId -> run id of the newest run */
  private readonly current = new Map<string, string>();
  private readonly timers = new Map<string, Map<string, TimerHandle>>();
  private readonly locks = new Map<string, () => void>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private sweepTimer?: TimerHandle;

  constructor(readonly eng: Engine) {
    // Compaction rewrites the log from live state: activity runs must be part of it.
    const base = eng.liveState;
    const runs = this.runs;
    eng.liveState = () => {
      const own = [...runs.entries()].map(([key, a]) => ({
        op: 'put' as const,
        key: PREFIX + key,
        value: toJsonBuffer(a),
      }));
      const rest = base();
      return (function* () {
        yield* rest;
        yield* own;
      })();
    };
  }

  key(a: ActivityRun): string {
    return activityKey(a.namespace, a.activityId, a.runId);
  }

  currentRun(namespace: string, activityId: string): ActivityRun | undefined {
    const runId = this.current.get(`${namespace}\u0000${activityId}`);
    return runId ? this.runs.get(activityKey(namespace, activityId, runId)) : undefined;
  }

  /** The run named (the newest one without a run id), or NOT_FOUND as the real server words it. */
  find(namespace: string, activityId: string, runId?: string): ActivityRun {
    const a = runId ? this.runs.get(activityKey(namespace, activityId, runId)) : this.currentRun(namespace, activityId);
    if (!a) throw notFound(`activity not found for ID: ${activityId}`);
    return a;
  }

  add(a: ActivityRun): void {
    this.runs.set(this.key(a), a);
    this.current.set(`${a.namespace}\u0000${a.activityId}`, a.runId);
    this.persist(a);
  }

  /** Records a change, written with the request's flush; a state transition unless `counted` is false. */
  persist(a: ActivityRun, counted = true): void {
    if (counted) a.transitions++;
    this.eng.addMutation({ op: 'put', key: PREFIX + this.key(a), value: toJsonBuffer(a) });
  }

  remove(a: ActivityRun): void {
    const key = this.key(a);
    this.clearTimers(a);
    this.unlock(a);
    this.runs.delete(key);
    const cur = `${a.namespace}\u0000${a.activityId}`;
    if (this.current.get(cur) === a.runId) this.current.delete(cur);
    this.eng.addMutation({ op: 'delete', key: PREFIX + key });
    this.notify(a);
  }

  // ---- timers and time-skipping locks -------------------------------------

  setTimer(a: ActivityRun, name: string, at: number, fn: (a: ActivityRun) => void): void {
    const key = this.key(a);
    let mine = this.timers.get(key);
    if (!mine) this.timers.set(key, (mine = new Map()));
    mine.get(name)?.cancel();
    mine.set(
      name,
      this.eng.clock.at(at, () => {
        mine!.delete(name);
        const run = this.runs.get(key);
        if (!run) return;
        try {
          fn(run);
        } catch (err) {
          this.eng.logger.error({ err, timer: name, activityId: run.activityId }, 'activity timer callback failed');
        }
        void this.eng.flush().catch((err) => this.eng.logger.error({ err }, 'flush after activity timer failed'));
      }),
    );
  }

  clearTimers(a: ActivityRun, names?: string[]): void {
    const mine = this.timers.get(this.key(a));
    if (!mine) return;
    for (const [name, t] of mine) {
      if (names && !names.includes(name)) continue;
      t.cancel();
      mine.delete(name);
    }
  }

  /** An attempt that is due holds virtual time (time skipping), like a workflow's activity. */
  lock(a: ActivityRun): void {
    const key = this.key(a);
    if (!this.locks.has(key)) this.locks.set(key, this.eng.clock.lock());
  }

  unlock(a: ActivityRun): void {
    const key = this.key(a);
    this.locks.get(key)?.();
    this.locks.delete(key);
  }

  // ---- waiting for a run to close -------------------------------------------

  /** Resolves once the run closes (or is deleted), or after `ms`. */
  waitClosed(a: ActivityRun, ms: number): Promise<void> {
    if (!isRunning(a) || ms <= 0) return Promise.resolve();
    const key = this.key(a);
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const wake = () => {
        clearTimeout(timer);
        set!.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  notify(a: ActivityRun): void {
    const key = this.key(a);
    const set = this.waiters.get(key);
    this.waiters.delete(key);
    set?.forEach((w) => w());
  }

  // ---- recovery and retention -------------------------------------------------

  /** Loads the runs of a recovered log; `rearm` restarts what a running one was waiting for. */
  recover(state: Map<string, RecoveredEntry>, rearm: (a: ActivityRun) => void): void {
    const loaded: ActivityRun[] = [];
    for (const [key, entry] of state) {
      if (key.startsWith(PREFIX) && entry.value) loaded.push(fromJsonBuffer<ActivityRun>(Buffer.from(entry.value)));
    }
    loaded.sort((x, y) => x.scheduleTime - y.scheduleTime);
    for (const a of loaded) {
      this.runs.set(this.key(a), a);
      this.current.set(`${a.namespace}\u0000${a.activityId}`, a.runId);
    }
    for (const a of loaded) if (isRunning(a)) rearm(a);
  }

  /** Removes closed runs past their namespace's retention, every minute of server time. */
  startRetention(): void {
    this.sweepTimer = this.eng.clock.after(RETENTION_SWEEP_MS, () => {
      const now = this.eng.now();
      let removed = 0;
      for (const a of [...this.runs.values()]) {
        const retention = this.eng.namespaces.get(a.namespace)?.retentionMs;
        if (a.closeTime !== undefined && retention !== undefined && a.closeTime + retention <= now) {
          this.remove(a);
          removed++;
        }
      }
      if (removed)
        void this.eng.flush().catch((err) => this.eng.logger.error({ err }, 'flush after activity retention failed'));
      this.startRetention();
    });
  }

  stop(): void {
    this.sweepTimer?.cancel();
    for (const a of this.runs.values()) this.clearTimers(a);
    for (const unlock of this.locks.values()) unlock();
    this.locks.clear();
  }
}
