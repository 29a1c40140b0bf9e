// The files and terminal lines `npm start` keeps of its processes (no network).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChildLogs } from '../../../src/dev/launcher/child-logs';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'child-logs-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('each process has its file (lines as written, appended across starts) and its rendered terminal line', async () => {
  const shown: string[] = [];
  const first = new ChildLogs({ dir, show: (l) => shown.push(l), format: 'pretty' });
  first.line(
    'gateway',
    JSON.stringify({ level: 'info', time: '2026-11-26T12:00:00.000Z', msg: 'gateway listening', port: 8080 }),
  );
  first.line('redis', 'Ready to accept connections');
  await first.close();
  const again = new ChildLogs({ dir });
  again.line('gateway', '{"level":"info","msg":"again"}');
  await again.close();
  expect(
    fs
      .readFileSync(path.join(dir, 'gateway.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg),
  ).toEqual(['gateway listening', 'again']);
  expect(fs.readFileSync(path.join(dir, 'redis.log'), 'utf8')).toBe('Ready to accept connections\n');
  expect(shown).toEqual([
    '12:00:00.000 gateway  INFO  gateway listening port=8080',
    'redis    | Ready to accept connections',
  ]);
});

test('a file past 20 MiB at start is kept as <name>.log.1 and a new one begun', async () => {
  fs.writeFileSync(path.join(dir, 'worker.log'), Buffer.alloc(21 * 1024 * 1024, 'x'));
  const logs = new ChildLogs({ dir });
  logs.line('worker', 'fresh');
  await logs.close();
  expect(fs.readFileSync(path.join(dir, 'worker.log'), 'utf8')).toBe('fresh\n');
  expect(fs.statSync(path.join(dir, 'worker.log.1')).size).toBe(21 * 1024 * 1024);
});

test('a file-only process (Redis) is kept in its file and not shown', async () => {
  const shown: string[] = [];
  const logs = new ChildLogs({ dir, show: (l) => shown.push(l), fileOnly: ['redis'] });
  logs.line('redis', '# Server initialized');
  logs.line('worker', '{"level":"info","msg":"worker started"}');
  await logs.close();
  expect(fs.readFileSync(path.join(dir, 'redis.log'), 'utf8')).toBe('# Server initialized\n');
  expect(shown).toHaveLength(1);
  expect(shown[0]).toContain('worker started');
});
