// Accounts CLI: creates API keys (shown once; only their hash is stored),
// revokes them, sets per-account limits, lists accounts.
//   npm run accounts -- add <account> [--key <key>]
//   npm run accounts -- revoke <key>
//   npm run accounts -- limit <account> <n|default>
//   npm run accounts -- list
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../common/config';
import { AccountsRegistry } from '../common/accounts/registry';
import { generateKey } from '../common/accounts/keys';
import { dataConverter } from '../common/codec/data-converter';

const out = (s: string) => process.stdout.write(`${s}\n`);

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const [cmd, ...rest] = argv;
  // The registry's signals and state are encrypted like every payload of the service.
  const converter = dataConverter(config);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS, connectTimeout: 5000 });
  try {
    const registry = new AccountsRegistry(
      new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: converter }),
      config.TEMPORAL_TASK_QUEUE,
    );
    switch (cmd) {
      case 'add': {
        const account = rest[0];
        if (!account) return usage();
        const i = rest.indexOf('--key');
        const key = i >= 0 ? rest[i + 1] : generateKey();
        if (!key) return usage();
        await registry.addKey(key, account);
        out(`account ${account}: API key ${key}`);
        out('Keep it now: only its hash is stored.');
        return 0;
      }
      case 'revoke': {
        if (!rest[0]) return usage();
        out((await registry.removeKey(rest[0])) ? 'key revoked' : 'no such key');
        return 0;
      }
      case 'limit': {
        const [account, n] = rest;
        if (!account || !n) return usage();
        const value = n === 'default' ? null : Number(n);
        if (value !== null && (!Number.isInteger(value) || value < 1)) return usage();
        await registry.setLimit(account, value);
        out(
          `account ${account}: at most ${value ?? `${config.MAX_RUNNING_TASKS_PER_ACCOUNT} (default)`} running background tasks`,
        );
        return 0;
      }
      case 'list': {
        const snap = await registry.snapshot();
        const counts = new Map<string, number>();
        for (const a of Object.values(snap.keys)) counts.set(a, (counts.get(a) ?? 0) + 1);
        for (const a of Object.values(snap.accounts)) {
          out(
            `${a.account}\tkeys=${counts.get(a.account) ?? 0}\tmaxRunning=${a.maxRunning ?? 'default'}\tcreated=${a.createdAt}`,
          );
        }
        return 0;
      }
      default:
        return usage();
    }
  } finally {
    await connection.close();
  }
}

function usage(): number {
  process.stderr.write(
    'usage: accounts add <account> [--key <key>] | revoke <key> | limit <account> <n|default> | list\n',
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`accounts: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
