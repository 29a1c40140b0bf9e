// The gateway's account directory over a fake registry (no network): a key
// added a moment ago is accepted at once, and a flood of unknown keys costs at
// most one registry query per gap.
import pino from 'pino';
import { AccountDirectory, AccountsRegistry } from '../../../src/common/accounts/registry';
import { hashKey } from '../../../src/common/accounts/keys';
import type { RegistryState } from '../../../workflows/accounts';

class FakeRegistry {
  keys: Record<string, string> = {};
  queries = 0;
  async snapshot(): Promise<RegistryState> {
    this.queries++;
    // A snapshot is what the registry held when the query arrived.
    const keys = { ...this.keys };
    await new Promise((r) => setTimeout(r, 20));
    return { keys, accounts: {} } as unknown as RegistryState;
  }
}

const logger = pino({ level: 'silent' });

/** A started directory over a fake registry, background refresh out of the way; stopped after. */
async function withDirectory(
  minGapMs: number,
  fn: (dir: AccountDirectory, reg: FakeRegistry) => Promise<void>,
): Promise<void> {
  const reg = new FakeRegistry();
  const dir = new AccountDirectory(reg as unknown as AccountsRegistry, [], logger, 60_000, minGapMs);
  await dir.start();
  try {
    await fn(dir, reg);
  } finally {
    dir.stop();
  }
}

test('a key added right after a refresh is accepted by the next lookup', () =>
  withDirectory(200, async (dir, reg) => {
    reg.keys[hashKey('new-key')] = 'acme';
    expect(await dir.lookup('new-key')).toMatchObject({ account: 'acme' });
  }));

test('a key added while a refresh is under way is not lost to that older snapshot', () =>
  withDirectory(50, async (dir, reg) => {
    // Part of the scenario: the 50 ms gap since start()'s refresh has passed, so only the refresh under way holds the lookup.
    await new Promise((r) => setTimeout(r, 60));
    const stale = dir.refresh(); // takes its snapshot now, without the key
    reg.keys[hashKey('late-key')] = 'acme';
    const found = dir.lookup('late-key');
    await stale;
    expect(await found).toMatchObject({ account: 'acme' });
  }));

test('unknown keys share refreshes: at most one registry query per gap', () =>
  withDirectory(300, async (dir, reg) => {
    const before = reg.queries;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => dir.lookup(`bad-${i}`)));
    expect(results.every((r) => r === undefined)).toBe(true);
    expect(reg.queries - before).toBe(1);
  }));
