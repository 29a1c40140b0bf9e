// Here in the engine's package so that its tests stand on their own (they import nothing from the
// service's tree); the service's tests take it from here (test/support/wait-until.ts re-exports it).
//
// The one poll of the test suite: waits for something to happen, and when it does not, says
// what was awaited and what was seen last. Its deadline is a safety net (a test that would
// hang ends with an explanation), not a claim about speed: speed figures come from
// `npm run bench`, never from a correctness test (docs/testing.md, "Waiting in tests").
import { inspect } from 'node:util';

export interface WaitOptions {
  /** How long to keep trying before failing; default 30 s (jest gives engine and e2e tests 60 s; unit tests have 10 s and pass less). */
  timeoutMs?: number;
  /** The pause between two reads; default 100 ms (a unit test's poll of its own state may pass less). */
  stepMs?: number;
  /**
   * Asked before each read: a reason to stop waiting at once (the process that was to do it has
   * exited, say), which the error then gives; undefined to go on.
   */
  giveUpIf?: () => string | undefined;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
export const DEFAULT_WAIT_STEP_MS = 100;

/** What a truthy check lets through. */
export type Truthy<T> = Exclude<T, null | undefined | false | 0 | 0n | ''>;

/**
 * Reads `read()` every `stepMs` until `done(value)` holds (without `done`: until the value is
 * truthy), and returns that value. A read or a `done` that throws is one more try, not a
 * failure; a read that has not answered by the deadline is not waited for. At the deadline (or
 * when `giveUpIf` gives a reason) it throws an Error naming `what` (say what is awaited: "the task
 * to complete"), the number of reads, the last value read and the last error.
 */
export function waitUntil<T>(what: string, read: () => T | Promise<T>, opts?: WaitOptions): Promise<Truthy<T>>;
export function waitUntil<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  opts?: WaitOptions,
): Promise<T>;
export async function waitUntil<T>(
  what: string,
  read: () => T | Promise<T>,
  doneOrOpts?: ((value: T) => boolean) | WaitOptions,
  maybeOpts?: WaitOptions,
): Promise<T | Truthy<T>> {
  if (!what) throw new Error('waitUntil: say what is awaited (its first argument)');
  const done = typeof doneOrOpts === 'function' ? doneOrOpts : (v: T) => Boolean(v);
  const opts = (typeof doneOrOpts === 'function' ? maybeOpts : doneOrOpts) ?? {};
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const stepMs = opts.stepMs ?? DEFAULT_WAIT_STEP_MS;
  const started = Date.now();
  const end = started + timeoutMs;
  let reads = 0;
  let seen = false;
  let last: T | undefined;
  let lastError: unknown;
  let pending = false;
  let gaveUp: string | undefined;
  for (;;) {
    gaveUp = opts.giveUpIf?.();
    if (gaveUp !== undefined) break;
    reads++;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>(
      (resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, end - Date.now()))),
    );
    try {
      const attempt = (async () => {
        const value = await read();
        seen = true;
        last = value;
        lastError = undefined;
        return { value, ok: done(value) };
      })();
      // An attempt that loses the race still settles later: its rejection is not unhandled.
      attempt.catch(() => undefined);
      const r = await Promise.race([attempt, expired]);
      if (r === 'expired') {
        pending = true;
        break;
      }
      if (r.ok) return r.value;
    } catch (err) {
      lastError = err;
    } finally {
      clearTimeout(timer);
    }
    if (Date.now() + stepMs > end) break;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  throw waitFailure({ what, started, timeoutMs, reads, gaveUp, pending, seen, last, lastError });
}

/** The error of a wait that ended without its condition: why, how long, how many reads, the last value and error. */
function waitFailure(w: {
  what: string;
  started: number;
  timeoutMs: number;
  reads: number;
  gaveUp: string | undefined;
  pending: boolean;
  seen: boolean;
  last: unknown;
  lastError: unknown;
}): Error {
  const { what, started, timeoutMs, reads, gaveUp, lastError } = w;
  const parts = [
    gaveUp !== undefined
      ? `waitUntil: gave up after ${Date.now() - started} ms waiting for ${what}: ${gaveUp}; ${reads} read(s)`
      : `waitUntil: timed out after ${Date.now() - started} ms (of ${timeoutMs}) waiting for ${what}; ${reads} read(s)`,
  ];
  if (w.pending) parts.push('the last read had not answered');
  if (w.seen) parts.push(`last value: ${show(w.last)}`);
  if (lastError !== undefined)
    parts.push(`last error: ${lastError instanceof Error ? (lastError.stack ?? lastError.message) : show(lastError)}`);
  return new Error(parts.join('; '), lastError === undefined ? undefined : { cause: lastError });
}

function show(v: unknown): string {
  const text = inspect(v, { depth: 4, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 2000 });
  return text.length > 4000 ? `${text.slice(0, 4000)}… (${text.length} characters)` : text;
}
