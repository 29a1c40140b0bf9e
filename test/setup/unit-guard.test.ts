// The unit project's guard (test/setup/unit-environment.js, unit-guard.ts) refuses each thing a
// unit test may not do, by name, and lets loopback through.
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';

const OFF_MACHINE = '192.0.2.1'; // TEST-NET-1: never routed

test('a child process is refused', () => {
  expect(() => spawnSync('true')).toThrow(/a unit test may not start a process \(child_process\.spawnSync\)/);
});

test('a connection off this machine is refused, however it is made', async () => {
  expect(() => net.connect({ host: OFF_MACHINE, port: 9 })).toThrow(
    /may not connect off this machine \(192\.0\.2\.1\)/,
  );
  expect(() => new net.Socket().connect(9, OFF_MACHINE)).toThrow(/may not connect off this machine/);
  expect(() => http.get(`http://${OFF_MACHINE}:9/`)).toThrow(/may not connect off this machine/);
  const err = await fetch(`http://${OFF_MACHINE}:8080/`).catch((e: Error) => e);
  expect(String((err as Error & { cause?: Error }).cause?.message ?? err)).toMatch(/may not connect off this machine/);
});

test('a name the test resolves itself is judged by the address its lookup gives', async () => {
  const lookup = (_host: string, _opts: unknown, cb: (err: Error | null, address: string, family: number) => void) =>
    cb(null, OFF_MACHINE, 4);
  const socket = net.connect({ host: 'service.test', port: 9, lookup: lookup as never });
  const err = await new Promise<Error>((resolve) => socket.once('error', resolve));
  expect(err.message).toMatch(/may not connect off this machine \(service\.test is 192\.0\.2\.1\)/);
});

test('a server of the test itself, on loopback, is reachable', async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(await res.text()).toBe('ok');
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a Temporal engine is refused', () => {
  expect(() => TestWorkflowEnvironment.createLocal()).toThrow(/may not start a Temporal engine/);
});
