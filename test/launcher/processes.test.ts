// The launcher's child processes: a Node child says it is ready over IPC,
// keeps our CPU priority (the worker sets its own, see test/worker), and stops.
import { startNode, waitFor, Child } from '../../src/launcher/processes';
import { threadNice } from '../worker/thread-nice';

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

test('a Node child is ready over IPC and keeps our priority', async () => {
  child = startNode('idle', 'test/launcher/fixtures/idle.ts', []);
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  expect(new Set(threadNice(child.proc.pid!).values())).toEqual(new Set([threadNice(process.pid).get(process.pid)]));
});

test('stop ends the child', async () => {
  child = startNode('idle', 'test/launcher/fixtures/idle.ts', []);
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  await child.stop();
  expect(child.proc.exitCode !== null || child.proc.signalCode !== null).toBe(true);
});
