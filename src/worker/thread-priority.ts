// CPU priority per thread. On Linux nice is a property of each thread, and a
// thread inherits its creator's value, so a process can keep one thread (the
// token thread) at its start priority and lower all the others; raising a nice
// value needs no privilege. And what a lowered process must not do: make its
// kept thread wait for lowered ones (scavengeWithoutHelpers).
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';

/** The calling thread's OS id (Linux, from /proc/thread-self); undefined elsewhere. */
export function osThreadId(): number | undefined {
  try {
    // The link reads "<pid>/task/<tid>".
    const link = fs.readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** Every thread of this process, by OS id (Linux); empty elsewhere. */
export function processThreadIds(): number[] {
  try {
    return fs
      .readdirSync('/proc/self/task')
      .map(Number)
      .filter((t) => Number.isInteger(t) && t > 0);
  } catch {
    return [];
  }
}

/**
 * Sets `nice` on every thread of this process but those in `keep`, including
 * the main thread, so threads it creates later inherit it. Threads that only
 * ever get a higher value are left alone. Where threads are not listed (not
 * Linux) the whole process gets `nice` and `keep` cannot be honoured.
 * Returns the number of threads changed.
 */
export function lowerPriorityExcept(nice: number, keep: readonly number[]): number {
  const tids = processThreadIds();
  if (tids.length === 0) {
    os.setPriority(nice);
    return 1;
  }
  let changed = 0;
  for (const tid of tids) {
    if (keep.includes(tid)) continue;
    try {
      if (os.getPriority(tid) >= nice) continue;
      os.setPriority(tid, nice);
      changed++;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return changed;
}

/**
 * Makes every isolate of this process collect its young generation on its own
 * thread. V8's parallel scavenge hands part of each young-generation
 * collection to the process's shared helper threads, and lowerPriorityExcept
 * lowers those with the rest: the token thread then pauses for helpers that
 * get a core last. In eight alternating pairs of relay-only bench runs at 8
 * streams (session 10), p99 was lower with it in six (median 6.9 against 8.5
 * ms) and p50 in seven (1.0 against 1.3 ms). V8 reads the flag at each
 * collection, so setting it once the process runs takes effect.
 */
export function scavengeWithoutHelpers(): void {
  v8.setFlagsFromString('--no-parallel-scavenge');
}
