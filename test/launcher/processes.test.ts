// The launcher's child processes: a niced child runs every one of its threads
// at that priority (Linux's nice is per thread), and still talks over IPC.
import fs from 'node:fs';
import { startNode, waitFor, Child } from '../../src/launcher/processes';

/** nice values of all threads of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNice(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after it are space-separated.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

test('a niced child: every thread at that nice value, ready over IPC', async () => {
  child = startNode('idle', 'test/launcher/fixtures/idle.ts', [], { nice: 7 });
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  const nice = threadNice(child.proc.pid!);
  expect(nice.length).toBeGreaterThan(1);
  expect(new Set(nice)).toEqual(new Set([7]));
});

test('without nice, the child keeps our priority', async () => {
  child = startNode('idle', 'test/launcher/fixtures/idle.ts', []);
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  expect(new Set(threadNice(child.proc.pid!))).toEqual(new Set(threadNice(process.pid).slice(0, 1)));
});
