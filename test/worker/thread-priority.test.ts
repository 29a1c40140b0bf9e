// Per-thread priority: the worker lowers every thread but its token thread,
// and threads started afterwards inherit the lowered value.
import { startNode, waitFor, Child } from '../../src/launcher/processes';
import { osThreadId, processThreadIds } from '../../src/worker/thread-priority';
import { threadNice } from './thread-nice';

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
