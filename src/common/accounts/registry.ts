// Access to the accounts registry workflow, for the gateway (cached lookups)
// and the CLI (changes).
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { RegistryState } from '../../../workflows/accounts';
import { hashKey } from './keys';
import {
  ACCOUNTS_WORKFLOW_ID,
  addKeyUpdate,
  removeKeyUpdate,
  setLimitUpdate,
  snapshotQuery,
} from '../../../workflows/definitions';

export interface Account {
  account: string;
  maxRunning?: number;
}

const SNAPSHOT_DEADLINE_MS = 5000;

export class AccountsRegistry {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  /** Starts the registry workflow if it is not running (idempotent). */
  async ensure(): Promise<void> {
    try {
      await this.client.workflow.start('accountsRegistry', {
        workflowId: ACCOUNTS_WORKFLOW_ID,
        taskQueue: this.taskQueue,
        args: [{ keys: {}, accounts: {} }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    } catch (err) {
      if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
    }
  }

  private handle() {
    return this.client.workflow.getHandle(ACCOUNTS_WORKFLOW_ID);
  }

  async addKey(key: string, account: string): Promise<void> {
    await this.ensure();
    await this.handle().executeUpdate(addKeyUpdate, { args: [{ keyHash: hashKey(key), account }] });
  }

  async removeKey(key: string): Promise<boolean> {
    return this.handle().executeUpdate(removeKeyUpdate, { args: [{ keyHash: hashKey(key) }] });
  }

  async setLimit(account: string, maxRunning: number | null): Promise<void> {
    await this.ensure();
    await this.handle().executeUpdate(setLimitUpdate, { args: [{ account, maxRunning }] });
  }

  async snapshot(): Promise<RegistryState> {
    try {
      // Bounded: a query waits for a worker, and a gateway must start (serving API_KEYS) without one.
      return await this.client.connection.withDeadline(Date.now() + SNAPSHOT_DEADLINE_MS, () =>
        this.handle().query(snapshotQuery),
      );
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return { keys: {}, accounts: {} };
      throw err;
    }
  }
}

/**
 * The gateway's view of accounts: keys from API_KEYS plus the registry's
 * snapshot, refreshed in the background and on an unknown key. An unknown key
 * waits for a snapshot taken after it arrived (a key added a moment ago is
 * accepted), and those refreshes start at most once a second, shared by all
 * waiting lookups, so a flood of bad keys cannot hammer Temporal.
 */
export class AccountDirectory {
  private byHash = new Map<string, Account>();
  private readonly envKeys = new Map<string, Account>();
  /** When the current or last snapshot query started. */
  private lastStart = 0;
  private refreshing?: Promise<void>;
  /** The refresh unknown keys wait for (it starts once the rate limit allows). */
  private scheduled?: Promise<void>;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly registry: AccountsRegistry | undefined,
    envPairs: { key: string; account: string }[],
    private readonly logger: Logger,
    /** Background refresh period, ms. Default 5000. */
    private readonly refreshMs = 5000,
    /** Least time between the starts of refreshes asked for by unknown keys, ms. Default 1000. */
    private readonly minGapMs = 1000,
  ) {
    for (const p of envPairs) this.envKeys.set(hashKey(p.key), { account: p.account });
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async lookup(key: string): Promise<Account | undefined> {
    const h = hashKey(key);
    const hit = this.envKeys.get(h) ?? this.byHash.get(h);
    if (hit || !this.registry) return hit ? { ...hit, ...this.limits(hit.account) } : undefined;
    await this.snapshotSince(Date.now()).catch(() => undefined);
    const again = this.byHash.get(h);
    return again ? { ...again } : undefined;
  }

  private limits(account: string): Partial<Account> {
    for (const a of this.byHash.values())
      if (a.account === account && a.maxRunning !== undefined) return { maxRunning: a.maxRunning };
    return {};
  }

  /** Resolves once a snapshot that started after `since` is in. */
  private snapshotSince(since: number): Promise<void> {
    // Strictly later: one that started in the same millisecond may have read the registry just before the key was added.
    if (this.refreshing && this.lastStart > since) return this.refreshing;
    this.scheduled ??= (async () => {
      try {
        const wait = this.lastStart + this.minGapMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // One that started before we were asked may miss the key: let it end, then take a new one.
        await this.refreshing?.catch(() => undefined);
      } finally {
        // Lookups from now on need a snapshot newer than the one about to start.
        this.scheduled = undefined;
      }
      await this.refresh();
    })();
    return this.scheduled;
  }

  refresh(): Promise<void> {
    if (!this.registry) return Promise.resolve();
    this.refreshing ??= (async () => {
      this.lastStart = Date.now();
      try {
        const snap = await this.registry!.snapshot();
        const next = new Map<string, Account>();
        for (const [hash, account] of Object.entries(snap.keys))
          next.set(hash, { account, maxRunning: snap.accounts[account]?.maxRunning });
        this.byHash = next;
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message },
          'accounts registry refresh failed; keeping the cached accounts',
        );
        throw err;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}
