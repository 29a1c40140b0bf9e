// The policy proxy on a unix socket, with a real HTTP server on 127.0.0.1 as the target. Loopback
// is blocked unless allowlisted: with 127.0.0.1/32 allowlisted the server is reachable, without it
// (or through a name that resolves to a private address) every form is refused with a 403 whose
// text names why, and the server never sees a connection.
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OutboundPolicy, type Resolver } from '../../../src/common/outbound/policy';
import { startPolicyProxy, type PolicyProxy, type ProxyDecision } from '../../../src/common/outbound/proxy';

const resolver: Resolver = async (host) => {
  if (host === 'private.test') return [{ address: '10.0.0.5', family: 4 }];
  if (host === 'local.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

let server: http.Server;
let port: number;
let connections = 0;
const seen: { url?: string; headers: http.IncomingHttpHeaders }[] = [];
let dir: string;
let proxy: PolicyProxy | undefined;
let decisions: ProxyDecision[];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    res.setHeader('x-target', 'yes');
    res.end(`hello from ${req.url}`);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-test-'));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  connections = 0;
  seen.length = 0;
  decisions = [];
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function start(allowlist: string, options: { connectTimeoutMs?: number } = {}): Promise<PolicyProxy> {
  proxy = await startPolicyProxy(new OutboundPolicy(allowlist, resolver), path.join(dir, 'proxy.sock'), {
    ...options,
    onDecision: (d) => decisions.push(d),
  });
  return proxy;
}

/** Sends `text` to the proxy's socket and reads until the proxy closes or `until` matches. */
function exchange(text: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy!.socketPath);
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString();
      if (until?.test(got)) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
    socket.write(text);
  });
}

test('a CONNECT to an allowlisted address is a tunnel to it', async () => {
  await start('127.0.0.1/32');
  const got = await exchange(
    `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\nGET /through HTTP/1.1\r\nHost: x\r\n\r\n`,
    /hello from \/through/,
  );
  expect(got).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\n/);
  expect(got).toContain('hello from /through');
  expect(decisions).toEqual([{ kind: 'connect', target: `127.0.0.1:${port}`, result: 'allowed' }]);
});

test.each([
  ['a loopback address', () => `127.0.0.1:${port}`, /127\.0\.0\.1, a loopback address/],
  [
    'a name resolving to a private address',
    () => 'private.test:443',
    /private\.test:443 resolves to 10\.0\.0\.5, a private/,
  ],
  ['a name resolving to loopback', () => `local.test:${port}`, /resolves to 127\.0\.0\.1, a loopback/],
  ['the metadata service', () => '169.254.169.254:80', /169\.254\.169\.254, a link-local/],
])('a CONNECT to %s is refused with a 403 saying why', async (_what, target, why) => {
  await start('');
  const got = await exchange(`CONNECT ${target()} HTTP/1.1\r\n\r\n`);
  expect(got).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
  expect(got).toMatch(why);
  expect(got).toContain('OUTBOUND_ALLOWLIST');
  expect(connections).toBe(0);
  expect(decisions).toEqual([expect.objectContaining({ kind: 'connect', result: 'refused' })]);
});

test('a CONNECT without host:port is a 400', async () => {
  await start('');
  for (const target of ['example.com', 'example.com:0', 'example.com:99999', '/path']) {
    const got = await exchange(`CONNECT ${target} HTTP/1.1\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*CONNECT needs host:port/);
  }
});

test('an absolute-form request goes to an allowlisted target, without the hop headers', async () => {
  await start('127.0.0.1/32');
  const got = await exchange(
    `GET http://127.0.0.1:${port}/plain?q=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      'Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nX-Mine: kept\r\nConnection: close\r\n\r\n',
  );
  expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(got).toMatch(/x-target: yes/i);
  expect(got).toContain('hello from /plain?q=1');
  expect(seen).toHaveLength(1);
  expect(seen[0].headers['x-mine']).toBe('kept');
  expect(seen[0].headers['proxy-authorization']).toBeUndefined();
  expect(seen[0].headers['proxy-connection']).toBeUndefined();
  expect(decisions).toEqual([{ kind: 'http', target: `127.0.0.1:${port}`, result: 'allowed' }]);
});

test('an absolute-form request to a blocked target is refused before any connection', async () => {
  await start('');
  const got = await exchange(`GET http://127.0.0.1:${port}/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
  expect(got).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*a loopback address/);
  expect(connections).toBe(0);
});

test('an origin-form or https:// request to the proxy is a 400 naming the forms it serves', async () => {
  await start('127.0.0.1/32');
  for (const line of ['GET /x HTTP/1.1', `GET https://127.0.0.1:${port}/x HTTP/1.1`]) {
    const got = await exchange(`${line}\r\nHost: a\r\nConnection: close\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  }
  expect(connections).toBe(0);
});

test('an answer slower than the connect timeout still comes through (only connecting is held to it)', async () => {
  const slow = http.createServer((_req, res) => setTimeout(() => res.end('late but here'), 300));
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  try {
    await start('127.0.0.1/32', { connectTimeoutMs: 100 });
    const at = `127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const got = await exchange(`GET http://${at}/ HTTP/1.1\r\nHost: ${at}\r\nConnection: close\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*late but here/);
  } finally {
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
  }
});

test('a target that refuses the connection is a 502 naming the error', async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await start('127.0.0.1/32');
  const got = await exchange(`CONNECT 127.0.0.1:${deadPort} HTTP/1.1\r\n\r\n`);
  expect(got).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*ECONNREFUSED/);
  expect(decisions).toEqual([expect.objectContaining({ result: 'failed' })]);
});

test('close() ends the tunnels still open and removes the socket', async () => {
  await start('127.0.0.1/32');
  const socket = net.connect(proxy!.socketPath);
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  const p = proxy!;
  proxy = undefined;
  await p.close();
  await ended;
  expect(fs.existsSync(p.socketPath)).toBe(false);
});
