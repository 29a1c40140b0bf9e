// The launcher's child processes: a Node child says it is ready over IPC,
// keeps our CPU priority (the worker sets its own, see test/worker), and stops.
import fs from 'node:fs';
import net from 'node:net';
import { freePort, startNode, waitFor, Child } from '../../../src/dev/launcher/processes';
import { threadNice } from '../../worker/thread-nice';

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

test('a Node child is ready over IPC and keeps our priority', async () => {
  child = startNode('idle', 'test/dev/launcher/fixtures/idle.ts', []);
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  expect(new Set(threadNice(child.proc.pid!).values())).toEqual(new Set([threadNice(process.pid).get(process.pid)]));
});

test('stop ends the child', async () => {
  child = startNode('idle', 'test/dev/launcher/fixtures/idle.ts', []);
  await waitFor('idle', child, () => child!.isReady(), 30_000);
  await child.stop();
  expect(child.proc.exitCode !== null || child.proc.signalCode !== null).toBe(true);
});

test('freePort gives a bindable port below the ephemeral range (where no outgoing connection takes it)', async () => {
  const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
  for (const port of ports) {
    expect(port).toBeLessThan(low);
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => srv.close(resolve));
  }
});

test('freePort hands out no port twice within minutes, across the processes of the machine', async () => {
  // Random picks alone would repeat one among 400 with a probability near 97% (the birthday bound
  // over the ~22,000 ports below the ephemeral range): the claim files shared by all processes
  // are what keeps two test processes from starting servers on one port (CI saw EADDRINUSE).
  const ports: number[] = [];
  for (let i = 0; i < 400; i++) ports.push(await freePort());
  expect(ports.length - new Set(ports).size).toBe(0);
});
