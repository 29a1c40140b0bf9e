// Closed runs are kept for their namespace's retention period, then removed from
// memory and from the durable store (what the real server's retention does).
import type { Engine } from './engine';
import { removeRun } from './delete-run';

export interface Retention {
  stop(): void;
  /** Removes expired runs now; returns how many. */
  sweep(): number;
}

/** Sweeps every `intervalMs` of server time (default one minute). */
export function startRetention(eng: Engine, intervalMs = 60_000): Retention {
  let timer: { cancel(): void } | undefined;
  let stopped = false;
  const sweep = () => {
    const now = eng.now();
    let removed = 0;
    const expired: string[] = [];
    for (const [key, e] of eng.executions) {
      if (e.closeTime === undefined) continue;
      const ns = eng.namespaces.get(e.namespace);
      if (ns && e.closeTime + ns.retentionMs <= now) expired.push(key);
    }
    if (eng.archive) expired.push(...eng.archive.expired((n) => eng.namespaces.get(n)?.retentionMs, now));
    for (const key of expired) {
      removeRun(eng, key);
      removed++;
    }
    if (removed) {
      eng.logger.debug({ removed }, 'retention removed closed runs');
      void eng.flush().catch((err) => eng.logger.error({ err }, 'flush after retention failed'));
    }
    return removed;
  };
  const arm = () => {
    if (stopped) return;
    timer = eng.clock.after(intervalMs, () => {
      sweep();
      arm();
    });
  };
  arm();
  return {
    sweep,
    stop: () => {
      stopped = true;
      timer?.cancel();
    },
  };
}
