import { Clock } from '../src/clock';
import v8 from 'node:v8';
import vm from 'node:vm';
import { waitUntil } from './support/wait-until';

const HOUR = 3600_000;
/** Lets a moment pass on purpose: for a timer that must NOT have fired in it. */
const tick = () => new Promise<void>((r) => setTimeout(r, 20));
/** Waits for timers that are due (skipped to) to have fired: `n` of them in all. */
const firedCount = (fired: unknown[], n: number) =>
  waitUntil(
    `${n} timer(s) to fire`,
    () => fired.length,
    (len) => len >= n,
    { timeoutMs: 5000, stepMs: 5 },
  );

/** Records the virtual time at which each timer fired. */
function recorder(clock: Clock) {
  const fired: { name: string; at: number }[] = [];
  const addAt = (name: string, at: number, fn?: () => void) =>
    clock.at(at, () => {
      fired.push({ name, at: clock.now() });
      fn?.();
    });
  const add = (name: string, delayMs: number, fn?: () => void) => addAt(name, clock.now() + delayMs, fn);
  return { fired, add, addAt };
}

describe('wall clock (dev server)', () => {
  test('timers fire at wall pace and locks are no-ops', async () => {
    const clock = new Clock();
    expect(clock.lockCount).toBe(0);
    clock.lock()();
    clock.unlockExplicit();
    const start = Date.now();
    await new Promise<void>((r) => clock.after(100, r));
    expect(Date.now() - start).toBeGreaterThanOrEqual(95);
    // The wall clock itself: read between two reads of Date.now().
    const before = Date.now();
    const now = clock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    clock.stop();
  });
});

describe('time skipping (test server)', () => {
  let clock: Clock;
  beforeEach(() => {
    clock = new Clock({ timeSkipping: true });
  });
  afterEach(() => clock.stop());

  test('starts locked: nothing skips until the client unlocks', async () => {
    const { fired, add } = recorder(clock);
    const wall0 = Date.now();
    const t0 = clock.now();
    add('a', HOUR);
    await tick();
    expect(fired).toEqual([]);
    clock.unlockExplicit();
    await firedCount(fired, 1);
    expect(fired.map((f) => f.name)).toEqual(['a']);
    expect(fired[0].at - t0).toBeGreaterThanOrEqual(HOUR);
    // The hour skipped and no more: besides it, time moved only as much as the wall clock did.
    expect(fired[0].at - t0).toBeLessThanOrEqual(HOUR + (Date.now() - wall0));
  });

  test('time runs at wall pace while locked', async () => {
    const wall0 = Date.now();
    const t0 = clock.now();
    // Time let pass on purpose, for the clock to follow.
    await new Promise((r) => setTimeout(r, 100));
    const elapsed = clock.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThanOrEqual(Date.now() - wall0);
  });

  test('any held lock stops skipping; releasing the last one resumes it', async () => {
    clock.unlockExplicit();
    const release = clock.lock();
    const { fired, add } = recorder(clock);
    add('a', HOUR);
    await tick();
    expect(fired).toEqual([]);
    release();
    release(); // idempotent
    expect(clock.lockCount).toBe(0);
    await firedCount(fired, 1);
    expect(fired.map((f) => f.name)).toEqual(['a']);
  });

  test('a timer whose callback takes a lock stops time right there', async () => {
    clock.unlockExplicit();
    const { fired, add } = recorder(clock);
    const wall0 = Date.now();
    const t0 = clock.now();
    add('first', HOUR, () => clock.lock());
    add('second', 2 * HOUR);
    await firedCount(fired, 1);
    await tick(); // on purpose: the second must not fire in it
    expect(fired.map((f) => f.name)).toEqual(['first']);
    // Stopped at the first hour: besides it, time moved only as much as the wall clock did.
    expect(clock.now() - t0).toBeLessThanOrEqual(HOUR + (Date.now() - wall0));
  });

  test('timers fire in time order, ties in scheduling order, cancelled ones never', async () => {
    clock.unlockExplicit();
    const { fired, addAt } = recorder(clock);
    // Absolute times: the wall clock may tick between two relative calls, and these ties must be ties.
    const wall0 = Date.now();
    const t0 = clock.now();
    addAt('late', t0 + 3 * HOUR);
    addAt('tie-1', t0 + HOUR);
    addAt('gone', t0 + 2 * HOUR).cancel();
    addAt('tie-2', t0 + HOUR);
    await firedCount(fired, 3);
    await tick(); // on purpose: the cancelled one must not fire in it
    expect(fired.map((f) => f.name)).toEqual(['tie-1', 'tie-2', 'late']);
    // Time skips to the tie; between the two callbacks the (unlocked) clock runs on at wall pace,
    // so the second may read a millisecond or so later (at most the wall time of the test), never an hour.
    expect(fired[0].at).toBeGreaterThanOrEqual(t0 + HOUR);
    expect(fired[1].at - fired[0].at).toBeLessThanOrEqual(Date.now() - wall0);
    expect(fired[2].at).toBeGreaterThanOrEqual(t0 + 3 * HOUR);
  });

  test('unlocking more than was locked is refused; a task lock taken over by a client unlock does not underflow', () => {
    clock.unlockExplicit();
    expect(() => clock.unlockExplicit()).toThrow(/not locked/);
    const release = clock.lock();
    clock.unlockExplicit(); // a client's unlock-with-sleep releases whatever holds time
    expect(clock.lockCount).toBe(0);
    expect(() => release()).not.toThrow();
    expect(clock.lockCount).toBe(0);
  });

  test('skipTo moves forward only', () => {
    const t0 = clock.now();
    clock.skipTo(t0 + HOUR);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(HOUR);
    const t1 = clock.now();
    clock.skipTo(t0);
    expect(clock.now()).toBeGreaterThanOrEqual(t1);
  });
});

describe('cancelled timers (a long-lived server cancels most of its timeouts early)', () => {
  test('a cancelled timer lets go of its callback at once, not at its deadline', async () => {
    // What a callback closes over (for the engine, a run's state and encoded history)
    // must be collectable as soon as the timer is cancelled.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const clock = new Clock();
    let held: WeakRef<object>;
    const handle = (() => {
      const payload = { bytes: Buffer.alloc(1024 * 1024) };
      held = new WeakRef(payload);
      return clock.after(HOUR, () => void payload.bytes.length);
    })();
    // A WeakRef target survives the job that created it; collect on a later turn.
    await tick();
    gc();
    expect(held!.deref()).toBeDefined();
    handle.cancel();
    await tick();
    gc();
    expect(held!.deref()).toBeUndefined();
    clock.stop();
  });

  test('the queue drops cancelled entries once they are most of it, and the rest still fire in order', async () => {
    const clock = new Clock({ timeSkipping: true });
    const { fired, addAt } = recorder(clock);
    const t0 = clock.now();
    const handles = Array.from({ length: 3000 }, (_, i) => addAt(`t${i}`, t0 + HOUR + (i % 7) * 1000));
    expect(clock.queued).toBe(3000);
    // Keep every sixth timer; cancel the others (a second cancel is a no-op).
    handles.forEach((h, i) => {
      if (i % 6 !== 0) {
        h.cancel();
        h.cancel();
      }
    });
    expect(clock.queued).toBeLessThan(3000);
    expect(clock.queued).toBeGreaterThanOrEqual(500);
    clock.unlockExplicit();
    const kept = handles.map((_, i) => i).filter((i) => i % 6 === 0);
    await firedCount(fired, kept.length);
    await tick(); // on purpose: no cancelled one may fire in it
    const expected = [...kept].sort((a, b) => (a % 7) - (b % 7) || a - b).map((i) => `t${i}`);
    expect(fired.map((f) => f.name)).toEqual(expected);
    expect(clock.queued).toBe(0);
    // Cancelling a timer that already fired changes nothing.
    handles[0].cancel();
    expect(clock.queued).toBe(0);
    clock.stop();
  });
});
