// The worker's open MCP sessions, one per account, server URL and token, so a
// run's calls (and the next run's) do not each pay a handshake. A session the
// server lost or closed is dropped and opened again on the next use; idle ones
// close after a while. Keys are hashed: no token is kept as a map key.
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Logger } from 'pino';
import type { McpServerConfig } from '../../workflows/types';
import { FetchLike, McpTransportName, OpenedClient, openMcpClient } from './connect';

export interface McpPoolOptions {
  fetch: FetchLike;
  logger: Logger;
  /** A session unused this long is closed, ms. */
  idleMs?: number;
  /** Opens a session (tests replace it). */
  open?: (server: McpServerConfig, fetch: FetchLike, timeoutMs: number) => Promise<OpenedClient>;
}

interface Entry {
  opened: Promise<OpenedClient>;
  lastUsed: number;
  /** Calls in flight: a long call keeps its session from the idle sweep. */
  busy: number;
}

export interface PooledClient {
  client: Client;
  transport: McpTransportName;
  key: string;
}

const DEFAULT_IDLE_MS = 5 * 60_000;

export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;

  constructor(private readonly opts: McpPoolOptions) {
    this.idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** Runs `fn` with the account's session with the server, opened if there is none. */
  async use<T>(
    account: string,
    server: McpServerConfig,
    timeoutMs: number,
    fn: (c: PooledClient) => Promise<T>,
  ): Promise<T> {
    const key = poolKey(account, server);
    const entry = this.entry(key, server, timeoutMs);
    entry.busy++;
    try {
      const { client, transport } = await entry.opened;
      return await fn({ client, transport, key });
    } finally {
      entry.busy--;
      entry.lastUsed = Date.now();
    }
  }

  private entry(key: string, server: McpServerConfig, timeoutMs: number): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      const open = this.opts.open ?? openMcpClient;
      entry = { opened: open(server, this.opts.fetch, timeoutMs), lastUsed: Date.now(), busy: 0 };
      this.entries.set(key, entry);
      const mine = entry;
      mine.opened.then(
        ({ client }) => {
          // The server closed the session (an SSE stream ended, the process went): open anew next time.
          client.onclose = () => this.drop(key, mine);
        },
        () => this.drop(key, mine),
      );
    }
    entry.lastUsed = Date.now();
    return entry;
  }

  /** Drops the account's session with the server (it failed: lost by the server, a broken connection). */
  forget(account: string, server: McpServerConfig): void {
    this.discard(poolKey(account, server));
  }

  private discard(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    void entry.opened.then(({ client }) => client.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.entries.keys()];
    all.forEach((k) => this.discard(k));
  }

  private drop(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [key, entry] of this.entries) if (!entry.busy && entry.lastUsed < cutoff) this.discard(key);
  }
}

function poolKey(account: string, server: McpServerConfig): string {
  return createHash('sha256')
    .update(`${account}\0${server.url}\0${server.token ?? ''}`)
    .digest('base64url');
}
