// The gateway's account directory over a fake registry (no network): a key
// added a moment ago is accepted at once, and a flood of unknown keys costs at
// most one registry query per gap.
import pino from 'pino';
import { AccountDirectory, AccountsRegistry } from '../../src/accounts/registry';
import { hashKey } from '../../src/accounts/keys';
import type { RegistryState } from '../../workflows/accounts';

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

test('a key added right after a refresh is accepted by the next lookup', async () => {
  const reg = new FakeRegistry();
  const dir = new AccountDirectory(reg as unknown as AccountsRegistry, [], logger, 60_000, 200);
  await dir.start();
  try {
    reg.keys[hashKey('new-key')] = 'acme';
    expect(await dir.lookup('new-key')).toMatchObject({ account: 'acme' });
  } finally {
    dir.stop();
  }
});

test('a key added while a refresh is under way is not lost to that older snapshot', async () => {
  const reg = new FakeRegistry();
  const dir = new AccountDirectory(reg as unknown as AccountsRegistry, [], logger, 60_000, 50);
  await dir.start();
  try {
    await new Promise((r) => setTimeout(r, 60));
    const stale = dir.refresh(); // takes its snapshot now, without the key
    reg.keys[hashKey('late-key')] = 'acme';
    const found = dir.lookup('late-key');
    await stale;
    expect(await found).toMatchObject({ account: 'acme' });
  } finally {
    dir.stop();
  }
});

test('unknown keys share refreshes: at most one registry query per gap', async () => {
  const reg = new FakeRegistry();
  const dir = new AccountDirectory(reg as unknown as AccountsRegistry, [], logger, 60_000, 300);
  await dir.start();
  try {
    const before = reg.queries;
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => dir.lookup(`bad-${i}`)));
    expect(results.every((r) => r === undefined)).toBe(true);
    expect(reg.queries - before).toBe(1);
  } finally {
    dir.stop();
  }
});
