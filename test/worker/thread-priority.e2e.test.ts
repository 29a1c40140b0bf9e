// Per-thread priority: the worker lowers every thread but its token thread,
// and threads started afterwards inherit the lowered value.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startNode, waitFor, Child } from '../../src/dev/launcher/processes';
import { osThreadId, processThreadIds } from '../../src/worker/thread-priority';
import { threadNice } from './thread-nice';
import { TS_LOADER_ARGS } from '../../src/common/ts-loader';

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

test('osThreadId names this thread: the main thread id is the pid', () => {
  expect(osThreadId()).toBe(process.pid);
  expect(processThreadIds()).toContain(process.pid);
});

test('lowerPriorityExcept lowers every thread but the kept one; later threads inherit it', async () => {
  child = startNode('priority', 'test/worker/fixtures/priority.ts', []);
  const report = new Promise<{ kept: number; later: number; changed: number }>((resolve) =>
    child!.proc.on('message', (m: { type?: string; kept: number; later: number; changed: number }) => {
      if (m.type === 'threads') resolve(m);
    }),
  );
  await waitFor('priority fixture', child, () => child!.isReady(), 30_000);
  const { kept, later, changed } = await report;
  const start = threadNice(process.pid).get(process.pid)!;
  const nice = threadNice(child.proc.pid!);
  expect(nice.get(kept)).toBe(start);
  expect(nice.get(later)).toBe(7);
  expect(nice.get(child.proc.pid!)).toBe(7);
  expect(changed).toBeGreaterThan(1);
  // Every thread but the kept one (V8's, libuv's, both JS threads' helpers) runs at 7.
  expect([...nice].filter(([tid]) => tid !== kept).every(([, n]) => n === 7)).toBe(true);
});

/** Helper-thread milliseconds of each young-generation collection of the scavenge fixture. */
function helperMsPerScavenge(mode: 'shared' | 'alone'): number[] {
  const fixture = path.join(__dirname, 'fixtures/scavenge.ts');
  // A large young generation: V8 shares a collection with more helpers the larger it is.
  const r = spawnSync(
    process.execPath,
    ['--min-semi-space-size=16', '--trace-gc-nvp', ...TS_LOADER_ARGS, fixture, mode],
    { encoding: 'utf8', timeout: 60_000 },
  );
  expect(r.status).toBe(0);
  return r.stdout
    .split('\n')
    .filter((l) => l.includes('gc=s '))
    .map((l) => Number(/background\.scavenge\.parallel=([\d.]+)/.exec(l)?.[1] ?? NaN));
}

test('scavengeWithoutHelpers: young-generation collections stop handing work to helper threads', () => {
  const shared = helperMsPerScavenge('shared');
  const alone = helperMsPerScavenge('alone');
  expect(shared.length).toBeGreaterThan(3);
  expect(alone.length).toBeGreaterThan(3);
  // Without it the helpers take part (so the fixture can tell the difference) ...
  expect(shared.some((ms) => ms > 0)).toBe(true);
  // ... with it, never.
  expect(alone.every((ms) => ms === 0)).toBe(true);
});
