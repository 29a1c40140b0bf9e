// The supervisor's IPC probe of a Node child: a pong within the deadline is
// healthy; a child that died, even one whose death the launcher has not heard
// of yet, is not, and its broken channel must not take the launcher down.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { ipcProbe } from '../../../src/dev/launcher/probes';
import type { Child } from '../../../src/dev/launcher/processes';

const PONGER = `process.on('message', (m) => m && m.type === 'ping' && process.send({ type: 'pong', id: m.id })); process.send({ type: 'ready' });`;

function startPonger(): Promise<ChildProcess> {
  const proc = fork('-e', [PONGER], { execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  return new Promise((resolve) => proc.once('message', () => resolve(proc)));
}

const asChild = (proc: ChildProcess) => () => ({ name: 'worker', proc }) as unknown as Child;

/** Blocks this thread: events (a child's exit, its channel closing) wait until it returns. */
const blockFor = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

test('a live child answers the ping', async () => {
  const proc = await startPonger();
  try {
    await expect(ipcProbe(asChild(proc))()).resolves.toBe(true);
  } finally {
    proc.kill('SIGKILL');
  }
});

test('a child killed a moment before the ping, its death not yet heard of: unhealthy, and no unhandled EPIPE', async () => {
  const proc = await startPonger();
  const unhandled: Error[] = [];
  const onUncaught = (err: Error) => unhandled.push(err);
  process.prependListener('uncaughtException', onUncaught);
  try {
    proc.kill('SIGKILL');
    blockFor(300); // the child is gone, but this thread has not run the exit or disconnect events
    expect(proc.connected).toBe(true);
    await expect(ipcProbe(asChild(proc))()).resolves.toBe(false);
    // Deliberate: time for an EPIPE of the probe's send to surface as an uncaught error (it must not).
    await new Promise((r) => setTimeout(r, 200));
    expect(unhandled).toEqual([]);
    expect(proc.listenerCount('error')).toBe(0); // nothing else caught it for the probe
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});
