// `npm run bench:soak` (the bench's soak phase, `bench/main.ts --phases soak`) against the real
// processes: its waves end only when the account has nothing queued or running, and it reports
// every process's RSS.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { KEY_A, useStack } from '../e2e/helpers';

jest.setTimeout(180_000);
const ctx = useStack({ SESSION_IDLE_CLOSE_MS: '2000' });
const ROOT = path.resolve(__dirname, '../..');
const SOAK = ['tsx', 'bench/main.ts', '--phases', 'soak'];

test('two small waves run to their end and print throughput and memory per process', async () => {
  const args = [
    ...SOAK,
    '--url',
    ctx.stack().gatewayUrl,
    '--key',
    KEY_A,
    '--soak-waves',
    '2',
    '--soak-tasks',
    '15',
    '--soak-clients',
    '3',
    '--soak-settle-ms',
    '100',
  ];
  const { stdout } = await promisify(execFile)('npx', args, { cwd: ROOT, timeout: 150_000 });
  const waves = stdout.split('\n').filter((l) => l.startsWith('wave '));
  expect(waves).toHaveLength(2);
  for (const line of waves) {
    expect(line).toMatch(
      /^wave \d: 15 submitted in [\d.]+ s, all ended after [\d.]+ s \([\d.]+ tasks\/s\); RSS MiB gateway \d+, worker \d+, engine \d+, redis \d+$/,
    );
  }
  // It waited for the tasks: none of the account's is left queued or running.
  for (const status of ['queued', 'running']) {
    expect((await ctx.call('GET', `/tasks?status=${status}`)).json.tasks).toEqual([]);
  }
  expect((await ctx.call('GET', '/tasks?status=completed&limit=100')).json.tasks.length).toBeGreaterThanOrEqual(30);
});

test('a wrong key stops it with the gateway answer', async () => {
  const args = [
    ...SOAK,
    '--url',
    ctx.stack().gatewayUrl,
    '--key',
    'not-a-key',
    '--soak-waves',
    '1',
    '--soak-tasks',
    '1',
  ];
  const err = await promisify(execFile)('npx', args, { cwd: ROOT, timeout: 60_000 }).catch((e) => e);
  expect(err.code).toBe(1);
  expect(err.stderr).toMatch(/POST \/ answered 401/);
});
