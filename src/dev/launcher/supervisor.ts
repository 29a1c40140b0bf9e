// Keeps `npm start`'s processes running: a component that exits is started
// again (same port, same data) after a backoff, the others go on; one that
// stops answering its health check (frozen, hung) is killed and started again.
// A component restarted too often in a short time means something is wrong
// that restarts will not fix: the supervisor gives up, and the launcher stops
// everything and exits non-zero, for an outer supervisor (systemd, Kubernetes)
// to act on.
import type { Child } from './processes';

export interface Supervised {
  name: string;
  current(): Child;
  restart(): Promise<Child>;
  /** Resolves true while the component answers; false or a rejection counts as a failed check. */
  probe?(): Promise<boolean>;
}

export interface SupervisorOptions {
  log: (line: string) => void;
  /** Restarts of one component allowed within `windowMs` before giving up. Default 5. */
  maxRestarts?: number;
  windowMs?: number;
  /** Health check period and how many failures in a row mean "frozen". Defaults 2 s and 3. */
  probeEveryMs?: number;
  failuresBeforeRestart?: number;
  /** Backoff before restart n (1-based): base * 2^(n-1), at most 10 s. Default base 500 ms. */
  backoffBaseMs?: number;
  /** Called once a component is running again (its restart counted in restartTotals). */
  onRestarted?: (name: string) => void;
}

const MAX_BACKOFF_MS = 10_000;

export class Supervisor {
  private stopping = false;
  private readonly restarts = new Map<string, number[]>();
  /** Restarts since the start, for metrics (`restarts` keeps only the recent ones). */
  private readonly totals = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly busy = new Set<string>();
  private probeTimer?: NodeJS.Timeout;
  private giveUp!: (reason: string) => void;
  /** Resolves with the reason when a component could not be kept running. */
  readonly gaveUp = new Promise<string>((resolve) => (this.giveUp = resolve));

  constructor(
    private readonly components: Supervised[],
    private readonly opts: SupervisorOptions,
  ) {}

  start(): void {
    for (const c of this.components) this.watch(c);
    const every = this.opts.probeEveryMs ?? 2000;
    this.probeTimer = setInterval(() => void this.probeAll(), every);
    this.probeTimer.unref();
  }

  stop(): void {
    this.stopping = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
  }

  /** Restarts made of a component so far. */
  restartCount(name: string): number {
    return this.restarts.get(name)?.length ?? 0;
  }

  /** Each component's successful restarts since supervision began (0 for those never restarted). */
  restartTotals(): Record<string, number> {
    return Object.fromEntries(this.components.map((c) => [c.name, this.totals.get(c.name) ?? 0]));
  }

  private watch(c: Supervised): void {
    const child = c.current();
    void child.exited.then(() => {
      if (this.stopping || c.current() !== child) return;
      void this.restart(c, describeExit(child));
    });
  }

  private async restart(c: Supervised, why: string): Promise<void> {
    if (this.busy.has(c.name)) return;
    this.busy.add(c.name);
    try {
      const now = Date.now();
      const recent = (this.restarts.get(c.name) ?? []).filter((t) => now - t < (this.opts.windowMs ?? 60_000));
      recent.push(now);
      this.restarts.set(c.name, recent);
      const max = this.opts.maxRestarts ?? 5;
      if (recent.length > max) {
        this.stop();
        const seconds = Math.round((this.opts.windowMs ?? 60_000) / 1000);
        this.giveUp(
          max === 0
            ? `${c.name} ${why}; restarts are off`
            : `${c.name} ${why}; it was restarted ${max} times within ${seconds} s: giving up`,
        );
        return;
      }
      const delay = Math.min(MAX_BACKOFF_MS, (this.opts.backoffBaseMs ?? 500) * 2 ** (recent.length - 1));
      this.opts.log(
        `${c.name} ${why}; restarting it in ${delay} ms (restart ${recent.length} of at most ${max} a minute)`,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.stopping) return;
      await c.restart();
      this.failures.set(c.name, 0);
      this.totals.set(c.name, (this.totals.get(c.name) ?? 0) + 1);
      this.opts.log(`${c.name} is running again`);
      this.watch(c);
      this.opts.onRestarted?.(c.name);
    } catch (err) {
      // It did not come up: count it as one more failure and try again (or give up).
      this.busy.delete(c.name);
      if (!this.stopping) await this.restart(c, `did not start again (${(err as Error).message.split('\n')[0]})`);
    } finally {
      this.busy.delete(c.name);
    }
  }

  private async probeAll(): Promise<void> {
    await Promise.all(this.components.filter((c) => c.probe && !this.busy.has(c.name)).map((c) => this.probeOne(c)));
  }

  private async probeOne(c: Supervised): Promise<void> {
    const ok = await c.probe!().catch(() => false);
    if (this.stopping || this.busy.has(c.name)) return;
    const failed = ok ? 0 : (this.failures.get(c.name) ?? 0) + 1;
    this.failures.set(c.name, failed);
    if (failed < (this.opts.failuresBeforeRestart ?? 3)) return;
    this.failures.set(c.name, 0);
    // SIGKILL: a frozen (SIGSTOPped) process ignores SIGTERM until it runs again. The exit handler restarts it.
    this.opts.log(`${c.name} stopped answering (${failed} health checks failed in a row); killing it`);
    c.current().proc.kill('SIGKILL');
  }
}

function describeExit(child: Child): string {
  const { exitCode, signalCode } = child.proc;
  return signalCode ? `was killed by ${signalCode}` : `exited with code ${exitCode}`;
}
