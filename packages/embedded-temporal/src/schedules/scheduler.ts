// The Schedules API's engine side: every schedule's state machine, driven by
// clock timers (so time skipping applies) instead of a system workflow. Each
// "wake" does what one iteration of Temporal's scheduler workflow does: take the
// spec times that elapsed (minding pause, remaining actions, catchup window and
// updates), feed backfills, run the overlap policy over the buffer, then sleep
// until the next action. Closed runs wake the schedule through closedListeners.
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import type { TimerHandle } from '../clock';
import type { RecoveredEntry } from '../storage/store';
import { fromJsonBuffer, toJsonBuffer } from '../engine/persistence';
import { WfStatus } from '../proto';
import { compileScheduleSpec, CompiledScheduleSpec } from './spec';
import { planBuffer } from './scheduler-buffer';
import { cancelRunning, closeOutcome, startScheduledWorkflow, terminateRunning } from './scheduler-actions';
import {
  ActionResult,
  BACKFILLS_PER_ITERATION,
  MAX_BUFFER_SIZE,
  RECENT_ACTION_COUNT,
  RETENTION_MS,
  ScheduleRecord,
  canTakeScheduledAction,
  catchupWindowMs,
  hasMoreAllowAllBackfills,
  lastEventTime,
  resolveOverlap,
  scheduleKey,
  storeKey,
} from './scheduler-state';

export { scheduleHandlers } from './scheduler-rpc';

interface RangeResult {
  /** Actual time of the first spec time after the range (undefined: none). */
  next?: number;
  /** Latest spec time the range handled; where the next walk resumes. */
  last: number;
}

export class Scheduler {
  private readonly schedules = new Map<string, ScheduleRecord>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly compiled = new Map<string, CompiledScheduleSpec>();
  private readonly wakeQueued = new Set<string>();
  private stopped = false;
  private readonly onClosed = (e: Execution) => this.runClosed(e);

  constructor(readonly eng: Engine) {
    eng.closedListeners.add(this.onClosed);
    // Compaction rewrites the log from live state: schedules must be part of it.
    const base = eng.liveState;
    const schedules = this.schedules;
    // Encoded now: the snapshot may be read after the records change.
    eng.liveState = () => {
      const own = [...schedules.values()].map((rec) => ({
        op: 'put' as const,
        key: storeKey(rec),
        value: toJsonBuffer(rec),
      }));
      const runs = base();
      return (function* () {
        yield* runs;
        yield* own;
      })();
    };
  }

  get(namespace: string, scheduleId: string): ScheduleRecord | undefined {
    return this.schedules.get(scheduleKey(namespace, scheduleId));
  }

  list(namespace: string): ScheduleRecord[] {
    return [...this.schedules.values()].filter((r) => r.namespace === namespace);
  }

  add(rec: ScheduleRecord): void {
    this.schedules.set(scheduleKey(rec.namespace, rec.scheduleId), rec);
    this.persist(rec);
  }

  remove(rec: ScheduleRecord): void {
    const key = scheduleKey(rec.namespace, rec.scheduleId);
    this.schedules.delete(key);
    this.compiled.delete(key);
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
    this.eng.addMutation({ op: 'delete', key: storeKey(rec) });
  }

  persist(rec: ScheduleRecord): void {
    this.eng.addMutation({ op: 'put', key: storeKey(rec), value: toJsonBuffer(rec) });
  }

  /** Forget the compiled spec after the spec changed. */
  specChanged(rec: ScheduleRecord): void {
    this.compiled.delete(scheduleKey(rec.namespace, rec.scheduleId));
  }

  compiledSpec(rec: ScheduleRecord): CompiledScheduleSpec {
    const key = scheduleKey(rec.namespace, rec.scheduleId);
    let c = this.compiled.get(key);
    if (!c) {
      c = compileScheduleSpec(rec.spec);
      this.compiled.set(key, c);
    }
    return c;
  }

  seed(rec: ScheduleRecord): string {
    return `${rec.namespaceId}-${rec.scheduleId}`;
  }

  /** The next `n` action times from the last processed time, like Describe's futureActionTimes. */
  futureActionTimes(rec: ScheduleRecord, n: number): number[] {
    if (rec.state.limitedActions) n = Math.min(rec.state.remainingActions ?? 0, n);
    const spec = this.compiledSpec(rec);
    const out: number[] = [];
    let t = rec.lastProcessedTime;
    while (out.length < n) {
      const next = spec.nextTime(t, this.seed(rec));
      if (!next) break;
      t = next.actualMs;
      // Times before an update belong to the old schedule and will never be taken.
      if ((rec.updateTime ?? 0) > t) continue;
      out.push(t);
    }
    return out;
  }

  /** Queues one action (or drops it when the buffer is full). */
  addStart(rec: ScheduleRecord, nominalMs: number, actualMs: number, overlapPolicy: number, manual: boolean): void {
    if (rec.buffer.length >= MAX_BUFFER_SIZE) {
      rec.bufferDropped++;
      return;
    }
    rec.buffer.push({ nominalMs, actualMs, overlapPolicy, manual });
  }

  /**
   * One scheduler iteration: catch up to now, start what the policies allow,
   * persist, and set the timer for the next wake. Mutations are flushed by the caller.
   */
  wake(rec: ScheduleRecord): void {
    if (this.stopped || this.get(rec.namespace, rec.scheduleId) !== rec) return;
    const now = this.eng.now();
    const end = Math.max(now, rec.lastProcessedTime);
    const range = this.processTimeRange(rec, rec.lastProcessedTime, end, 0, false);
    rec.lastProcessedTime = range.last;
    this.processBackfills(rec);
    while (this.processBuffer(rec)) {
      // A start that could not be taken may have freed the way for the next buffered one.
    }
    const expiry = this.retentionExpiry(rec, range.next);
    if (expiry !== undefined && expiry <= now) {
      // An idle schedule that can never act again goes away, as its workflow would exit.
      this.eng.logger.info({ scheduleId: rec.scheduleId }, 'schedule finished and retention expired');
      this.remove(rec);
      return;
    }
    this.persist(rec);
    this.arm(rec, this.nextWakeup(rec, range.next, expiry));
  }

  private nextWakeup(rec: ScheduleRecord, next: number | undefined, expiry: number | undefined): number | undefined {
    let at = next;
    // Backfills that may overlap are paced one batch a second.
    if (hasMoreAllowAllBackfills(rec)) at = this.eng.now() + 1000;
    // Paused or out of actions: nothing to do until an API call wakes us.
    else if (!canTakeScheduledAction(rec, false, false)) at = undefined;
    return expiry ?? at;
  }

  private retentionExpiry(rec: ScheduleRecord, next: number | undefined): number | undefined {
    // The test server keeps everything: a 7-day retention timer would only make idle virtual time jump.
    if (this.eng.clock.timeSkipping) return undefined;
    if (
      rec.state.paused ||
      (next !== undefined && canTakeScheduledAction(rec, false, false)) ||
      hasMoreAllowAllBackfills(rec)
    ) {
      return undefined;
    }
    return lastEventTime(rec) + RETENTION_MS;
  }

  private arm(rec: ScheduleRecord, at: number | undefined): void {
    const key = scheduleKey(rec.namespace, rec.scheduleId);
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
    if (at === undefined) return;
    this.timers.set(
      key,
      this.eng.clock.at(at, () => {
        this.timers.delete(key);
        this.wakeAndFlush(rec);
      }),
    );
  }

  wakeAndFlush(rec: ScheduleRecord): void {
    try {
      this.wake(rec);
    } catch (err) {
      this.eng.logger.error({ err, scheduleId: rec.scheduleId }, 'schedule iteration failed');
    }
    void this.eng.flush().catch((err) => this.eng.logger.error({ err }, 'flush after schedule iteration failed'));
  }

  /** Wakes the schedule once the current engine mutation has finished (coalesced). */
  wakeSoon(rec: ScheduleRecord): void {
    const key = scheduleKey(rec.namespace, rec.scheduleId);
    if (this.wakeQueued.has(key)) return;
    this.wakeQueued.add(key);
    queueMicrotask(() => {
      this.wakeQueued.delete(key);
      this.wakeAndFlush(rec);
    });
  }

  processTimeRange(
    rec: ScheduleRecord,
    start: number,
    end: number,
    overlapPolicy: number,
    manual: boolean,
    limit?: { n: number },
  ): RangeResult {
    const spec = this.compiledSpec(rec);
    const seed = this.seed(rec);
    // Paused or out of actions: the whole range passes without actions (and without counting misses).
    if (!manual && !canTakeScheduledAction(rec, false, false))
      return { next: spec.nextTime(end, seed)?.actualMs, last: end };
    const catchup = catchupWindowMs(rec);
    let last = start;
    let next = spec.nextTime(start, seed);
    for (; next && next.actualMs <= end; next = spec.nextTime(next.actualMs, seed)) {
      if (!manual && (rec.updateTime ?? 0) > next.actualMs) {
        // Before the latest update: the old schedule's time, dropped.
        last = next.actualMs;
        continue;
      }
      if (!manual && end - next.actualMs > catchup) {
        rec.missedCatchupWindow++;
        last = next.actualMs;
        continue;
      }
      this.addStart(rec, next.nominalMs, next.actualMs, overlapPolicy, manual);
      last = next.actualMs;
      if (limit && --limit.n <= 0) break;
    }
    return { next: next?.actualMs, last };
  }

  private processBackfills(rec: ScheduleRecord): void {
    const limit = { n: BACKFILLS_PER_ITERATION };
    // Backfills may use only half the buffer, leaving room for scheduled actions.
    while (rec.backfills.length > 0 && limit.n > 0 && rec.buffer.length < MAX_BUFFER_SIZE / 2) {
      const bf = rec.backfills[0];
      const { next } = this.processTimeRange(rec, bf.startMs, bf.endMs, bf.overlapPolicy, true, limit);
      if (next === undefined || next > bf.endMs) rec.backfills.shift();
      else bf.startMs = next;
    }
  }

  /** Returns true when another pass may start more. */
  private processBuffer(rec: ScheduleRecord): boolean {
    this.refresh(rec);
    if (!rec.action?.startWorkflow || rec.buffer.length === 0) {
      rec.buffer = [];
      return false;
    }
    const plan = planBuffer(rec.buffer, rec.running.length > 0, (p) => resolveOverlap(rec, p));
    rec.buffer = plan.remaining;
    rec.overlapSkipped += plan.overlapSkipped;
    let again = false;
    const starts = plan.nonOverlapping ? [...plan.overlapping, plan.nonOverlapping] : plan.overlapping;
    for (const start of starts) {
      if (!canTakeScheduledAction(rec, start.manual, true)) {
        again = true;
        continue;
      }
      // The buffered start carries the policy it was asked with; ids and result chaining depend on the resolved one.
      const resolved = { ...start, overlapPolicy: resolveOverlap(rec, start.overlapPolicy) };
      try {
        this.recordAction(rec, startScheduledWorkflow(this.eng, rec, resolved), start === plan.nonOverlapping);
      } catch (err) {
        // Like the server: the action is dropped (e.g. the id is still running) and logged.
        this.eng.logger.warn(
          { err: (err as Error).message, scheduleId: rec.scheduleId },
          'schedule failed to start workflow',
        );
        again = true;
      }
    }
    const running = [...rec.running];
    if (plan.needTerminate) running.forEach((w) => terminateRunning(this.eng, rec, w));
    else if (plan.needCancel) running.forEach((w) => cancelRunning(this.eng, rec, w));
    return again;
  }

  private recordAction(rec: ScheduleRecord, result: ActionResult, nonOverlapping: boolean): void {
    rec.actionCount++;
    rec.recent.push(result);
    if (rec.recent.length > RECENT_ACTION_COUNT) rec.recent.splice(0, rec.recent.length - RECENT_ACTION_COUNT);
    // Only the non-overlapping run is waited for; ALLOW_ALL runs are fire-and-forget.
    if (nonOverlapping) rec.running.push({ workflowId: result.workflowId, runId: result.runId });
  }

  /** Reconciles the tracked runs with the engine (after recovery, or a close we did not hear about). */
  private refresh(rec: ScheduleRecord): void {
    for (const w of [...rec.running]) {
      const cur = this.eng.currentRun(rec.namespace, w.workflowId);
      if (cur && cur.firstRunId === w.runId && this.eng.isOpen(cur)) continue;
      if (cur && cur.firstRunId === w.runId) this.chainClosed(rec, cur);
      else rec.running = rec.running.filter((r) => r !== w);
    }
  }

  private runClosed(e: Execution): void {
    if (this.stopped || e.newRunId) return; // a retry, cron or continue-as-new run follows: the chain goes on
    for (const rec of this.schedules.values()) {
      if (rec.namespace !== e.namespace) continue;
      const recent = rec.recent.find((a) => a.workflowId === e.workflowId && a.runId === e.firstRunId);
      const tracked = rec.running.some((w) => w.workflowId === e.workflowId && w.runId === e.firstRunId);
      if (!recent && !tracked) continue;
      if (recent) recent.status = e.status;
      if (tracked) {
        this.chainClosed(rec, e);
        this.wakeSoon(rec);
      }
      this.persist(rec);
    }
  }

  /** A tracked run's chain ended: stop waiting for it, and apply pause-on-failure and result chaining. */
  private chainClosed(rec: ScheduleRecord, e: Execution): void {
    rec.running = rec.running.filter((w) => !(w.workflowId === e.workflowId && w.runId === e.firstRunId));
    const recent = rec.recent.find((a) => a.workflowId === e.workflowId && a.runId === e.firstRunId);
    if (recent) recent.status = e.status;
    const out = closeOutcome(e);
    const failed = out.status === WfStatus.FAILED || out.status === WfStatus.TIMED_OUT;
    if (rec.policies?.pauseOnFailure && failed && !rec.state.paused) {
      rec.state.paused = true;
      rec.state.notes =
        out.status === WfStatus.FAILED
          ? `paused due to workflow failure: ${e.workflowId}: ${out.failure?.message ?? ''}`
          : `paused due to workflow timeout: ${e.workflowId}`;
      rec.conflictToken++;
    }
    if (out.result !== undefined) {
      rec.lastCompletionResult = out.result;
      rec.continuedFailure = undefined;
    } else if (out.failure !== undefined) {
      rec.continuedFailure = out.failure;
    }
    this.persist(rec);
  }

  recover(state: Map<string, RecoveredEntry>): void {
    for (const [key, entry] of state) {
      if (!key.startsWith('s/') || !entry.value) continue;
      const rec = fromJsonBuffer<ScheduleRecord>(entry.value);
      if (!this.eng.namespaces.has(rec.namespace)) continue;
      this.schedules.set(scheduleKey(rec.namespace, rec.scheduleId), rec);
    }
    // Time passed while we were down: each schedule catches up (within its catchup window).
    for (const rec of this.schedules.values()) this.wake(rec);
  }

  stop(): void {
    this.stopped = true;
    this.eng.closedListeners.delete(this.onClosed);
    this.timers.forEach((t) => t.cancel());
    this.timers.clear();
  }
}

/** Starts the scheduler, resuming the schedules of a recovered store. */
export function startScheduler(eng: Engine, recovered?: Map<string, RecoveredEntry>): Scheduler {
  const s = new Scheduler(eng);
  if (recovered) s.recover(recovered);
  return s;
}
