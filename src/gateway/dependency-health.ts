// Whether the gateway's dependencies answer, probed in the background, so a
// request made while one is away is refused at once (503 with Retry-After)
// instead of waiting out a call's deadline. A dependency that is reachable but
// frozen (SIGSTOP, a full disk, a stuck event loop) accepts connections and
// never answers: only a probe with its own short timeout tells.
//
// One slow probe is not an outage (a loaded machine): a dependency is away
// after AWAY_AFTER probes in a row failed, and back at the first that answers.
import type { Logger } from 'pino';
import { DependencyUnavailableError } from '../common/errors';
import { withTimeout } from '../common/timeout';

export type Dependency = 'redis' | 'temporal';

export interface HealthOptions {
  /** Time between probes of each dependency, ms. */
  intervalMs: number;
  /** A probe not answered within this is a failure, ms. */
  timeoutMs: number;
}

const AWAY_AFTER = 2;
const DEFAULTS: HealthOptions = { intervalMs: 500, timeoutMs: 1000 };

const UNAVAILABLE: Record<Dependency, string> = {
  temporal: 'Temporal is unavailable; retry shortly',
  redis: 'the event relay (Redis) is unavailable; retry shortly, or run in background and poll the task',
};

interface State {
  failures: number;
  away: boolean;
  timer?: NodeJS.Timeout;
}

export class DependencyHealth {
  private readonly states = new Map<Dependency, State>();
  private readonly opts: HealthOptions;
  private stopped = false;

  constructor(
    private readonly probes: Record<Dependency, () => Promise<unknown>>,
    private readonly logger: Logger,
    opts: Partial<HealthOptions> = {},
  ) {
    this.opts = { ...DEFAULTS, ...opts };
    for (const dep of Object.keys(probes) as Dependency[]) this.states.set(dep, { failures: 0, away: false });
  }

  start(): void {
    for (const dep of this.states.keys()) this.schedule(dep, 0);
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.states.values()) clearTimeout(s.timer);
  }

  isAway(dep: Dependency): boolean {
    return this.states.get(dep)?.away ?? false;
  }

  /** Throws the 503 of a dependency that is away. */
  require(dep: Dependency): void {
    if (this.isAway(dep)) throw new DependencyUnavailableError(dep, UNAVAILABLE[dep], 1);
  }

  /** Probes once now; resolves with whether the dependency answered in time. */
  async probe(dep: Dependency): Promise<boolean> {
    const ok = await withTimeout(this.probes[dep](), this.opts.timeoutMs).then(
      () => true,
      () => false,
    );
    this.record(dep, ok);
    return ok;
  }

  private schedule(dep: Dependency, delayMs: number): void {
    if (this.stopped) return;
    const s = this.states.get(dep)!;
    s.timer = setTimeout(() => void this.probe(dep).finally(() => this.schedule(dep, this.opts.intervalMs)), delayMs);
    s.timer.unref();
  }

  private record(dep: Dependency, ok: boolean): void {
    const s = this.states.get(dep)!;
    s.failures = ok ? 0 : s.failures + 1;
    const away = s.failures >= AWAY_AFTER;
    if (away === s.away) return;
    s.away = away;
    if (away)
      this.logger.warn(
        { dependency: dep, timeoutMs: this.opts.timeoutMs },
        `${dep} does not answer; requests that need it get 503 until it does`,
      );
    else this.logger.info({ dependency: dep }, `${dep} answers again`);
  }
}
