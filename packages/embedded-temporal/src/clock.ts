// The server's notion of time and its timer queue.
//
// In dev-server mode time is the wall clock. In time-skipping mode (the test
// server) time is virtual: while nothing holds a lock, the clock jumps straight to
// the next due timer, so a 30-day sleep completes in milliseconds. Locks are held
// by whatever must be observed at "real" pace: outstanding workflow and activity
// tasks, pending queries, and clients that asked for it (LockTimeSkipping).

export interface TimerHandle {
  cancel(): void;
}

interface TimerEntry {
  at: number;
  seq: number;
  /** Dropped (set to NOOP) once the entry fires or is cancelled: see cancel(). */
  fn: () => void;
  /** Fired or cancelled; a cancelled entry stays queued until it surfaces or a compaction. */
  done: boolean;
}

const NOOP = () => undefined;
/** Cancelled entries tolerated in the queue before it is compacted (and only when they are most of it). */
const COMPACT_AFTER = 1024;

export interface ClockOptions {
  /** Virtual time that skips ahead when unlocked. Default false (wall clock). */
  timeSkipping?: boolean;
  /** Initial lock count in time-skipping mode; the test server starts locked. Default 1. */
  initialLocks?: number;
}

export class Clock {
  private heap: TimerEntry[] = [];
  /** Cancelled entries still in the heap. */
  private cancelledQueued = 0;
  private seq = 0;
  private offset = 0; // virtual - wall, grows with every skip
  private locks: number;
  private armed?: NodeJS.Timeout;
  private armedAt = Infinity;
  private pumpQueued = false;
  private stopped = false;
  readonly timeSkipping: boolean;

  constructor(opts: ClockOptions = {}) {
    this.timeSkipping = opts.timeSkipping ?? false;
    this.locks = this.timeSkipping ? (opts.initialLocks ?? 1) : 0;
  }

  now(): number {
    return Date.now() + this.offset;
  }

  get lockCount(): number {
    return this.locks;
  }

  /** Runs fn once virtual time reaches `at` (epoch ms). */
  at(at: number, fn: () => void): TimerHandle {
    const entry: TimerEntry = { at, seq: this.seq++, fn, done: false };
    this.push(entry);
    this.schedulePump();
    return {
      cancel: () => {
        if (entry.done) return;
        // The callback usually holds its run's state (the engine's timers close over
        // a run's side data and encoded history). A timeout cancelled early (an
        // activity's ten-minute start-to-close, a session's idle timer) would
        // otherwise keep all of that alive until its deadline, long after the run
        // closed and left memory.
        entry.done = true;
        entry.fn = NOOP;
        this.cancelledQueued++;
        if (this.cancelledQueued > COMPACT_AFTER && this.cancelledQueued * 2 > this.heap.length) this.compact();
      },
    };
  }

  /** Timers queued, cancelled ones not yet dropped included (diagnostics and tests). */
  get queued(): number {
    return this.heap.length;
  }

  after(ms: number, fn: () => void): TimerHandle {
    return this.at(this.now() + ms, fn);
  }

  /** Holds time skipping off until the returned function is called (idempotent). */
  lock(): () => void {
    if (!this.timeSkipping) return () => undefined;
    this.locks++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // One shared counter, like the Java test server: a client's UnlockTimeSkippingWithSleep
      // may already have taken this lock's share, so never go below zero.
      if (this.locks > 0) this.release();
    };
  }

  /** Client lock (TestService LockTimeSkipping); counted with every other lock. */
  lockExplicit(): void {
    if (this.timeSkipping) this.locks++;
  }

  /**
   * Client unlock (TestService UnlockTimeSkipping). Releases one lock whoever took
   * it, as the Java test server does; refused when nothing holds time.
   */
  unlockExplicit(): void {
    if (!this.timeSkipping) return;
    if (this.locks <= 0) throw new Error('time skipping is not locked');
    this.release();
  }

  private release(): void {
    this.locks--;
    if (this.locks === 0) this.schedulePump();
  }

  /** Moves virtual time forward (never backward); used by Sleep-style test calls. */
  skipTo(at: number): void {
    const now = this.now();
    if (at > now) this.offset += at - now;
    this.schedulePump();
  }

  stop(): void {
    this.stopped = true;
    if (this.armed) clearTimeout(this.armed);
  }

  private schedulePump(): void {
    if (this.pumpQueued || this.stopped) return;
    this.pumpQueued = true;
    // setImmediate lets the current request finish (and take its locks) before we
    // decide the system is idle and skip time.
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped) return;
    for (;;) {
      const top = this.peek();
      if (!top) return;
      let now = this.now();
      if (top.at > now && this.timeSkipping && this.locks === 0) {
        this.offset += top.at - now;
        now = top.at;
      }
      if (top.at <= now) {
        this.pop();
        const fn = top.fn;
        top.done = true;
        top.fn = NOOP;
        fn();
        continue;
      }
      this.arm(top.at - now);
      return;
    }
  }

  private arm(delayMs: number): void {
    const target = Date.now() + delayMs;
    if (this.armed && this.armedAt <= target) return;
    if (this.armed) clearTimeout(this.armed);
    this.armedAt = target;
    // Cap the delay: setTimeout overflows past ~24.8 days, and virtual time may jump meanwhile.
    this.armed = setTimeout(
      () => {
        this.armed = undefined;
        this.armedAt = Infinity;
        this.pump();
      },
      Math.min(Math.max(delayMs, 0), 60_000),
    );
    this.armed.unref?.();
  }

  private peek(): TimerEntry | undefined {
    while (this.heap.length && this.heap[0].done) {
      this.pop();
      this.cancelledQueued--;
    }
    return this.heap[0];
  }

  /** Drops every cancelled entry; a sorted array is a valid heap. */
  private compact(): void {
    this.heap = this.heap.filter((e) => !e.done).sort((a, b) => (less(a, b) ? -1 : 1));
    this.cancelledQueued = 0;
  }

  private push(e: TimerEntry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private pop(): TimerEntry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

function less(a: TimerEntry, b: TimerEntry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
