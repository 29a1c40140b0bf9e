// policyFetch against real HTTP servers on 127.0.0.1 (free ports). Refused
// targets (169.254.169.254, 10.0.0.1, a rebinding name) are never connected
// to: the policy refuses them before a socket exists, which the dispatch spy
// and the servers' connection counts show.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent } from 'undici';
import { policyFetch, type PolicyFetch } from '../../../src/common/outbound/fetch';
import { OutboundPolicy, OutboundRefusedError, type Resolver } from '../../../src/common/outbound/policy';

interface TestServer {
  base: string;
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

async function startServer(
  handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void,
): Promise<TestServer> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      t.requests.push(`${req.method} ${req.url}`);
      handler(req, body, res);
    });
  });
  server.on('connection', () => t.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const t: TestServer = {
    base: `http://127.0.0.1:${port}`,
    port,
    connections: 0,
    requests: [],
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return t;
}

let releaseStream: () => void = () => undefined;

/** /echo: method, body and auth header; /redirect?status=&to=: a redirect; /loop: redirects to itself; /stream: SSE held open. */
function routes(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/echo') {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        method: req.method,
        body,
        authorization: req.headers.authorization ?? null,
        contentType: req.headers['content-type'] ?? null,
      }),
    );
  } else if (url.pathname === '/redirect') {
    res
      .writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' })
      .end('moved');
  } else if (url.pathname === '/loop') {
    res.writeHead(302, { location: '/loop' }).end();
  } else if (url.pathname === '/stream') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    releaseStream = () => res.end('data: two\n\n');
  } else if (url.pathname === '/never') {
    res.writeHead(200).write('partial'); // never ends: for the abort test
  } else {
    res.writeHead(404).end();
  }
}

const redirect = (status: number, to: string) => `/redirect?status=${status}&to=${encodeURIComponent(to)}`;

async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

let server: TestServer;
let other: TestServer; // a second origin (another port)
const fetches: PolicyFetch[] = [];
const make = (allowlist: string, resolver?: Resolver, opts?: { maxRedirects?: number }) => {
  const f = policyFetch(new OutboundPolicy(allowlist, resolver), opts);
  fetches.push(f);
  return f;
};

beforeAll(async () => {
  server = await startServer(routes);
  other = await startServer(routes);
});
afterAll(async () => {
  await Promise.all(fetches.map((f) => f.close()));
  await Promise.all([server.close(), other.close()]);
});

describe('allowed calls (OUTBOUND_ALLOWLIST=127.0.0.1)', () => {
  const f = () => make('127.0.0.1');

  test('GET and POST work', async () => {
    const fetch: FetchLike = f(); // what the MCP SDK's transports take as their `fetch` option
    expect(await (await fetch(`${server.base}/echo`)).json()).toMatchObject({ method: 'GET', body: '' });
    // A global Headers, as the MCP SDK passes them (undici's own Headers is another class).
    const headers = new globalThis.Headers({ 'content-type': 'application/json', authorization: 'Bearer t' });
    const res = await fetch(new URL(`${server.base}/echo`), { method: 'POST', body: '{"jsonrpc":"2.0"}', headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      method: 'POST',
      body: '{"jsonrpc":"2.0"}',
      contentType: 'application/json',
      authorization: 'Bearer t',
    });
  });

  test('an SSE response streams: the first event arrives while the server still holds the response open', async () => {
    const res = await f()(`${server.base}/stream`, { headers: { accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('data: one\n\n');
    releaseStream();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe('data: two\n\n');
  });

  test('a 307 redirect to an allowlisted path is followed with method and body', async () => {
    const res = await f()(`${server.base}${redirect(307, '/echo')}`, { method: 'POST', body: 'keep me' });
    expect(res.url).toBe(`${server.base}/echo`);
    expect(await res.json()).toMatchObject({ method: 'POST', body: 'keep me' });
  });

  test('303, and 302 of a POST, continue as a GET without body', async () => {
    for (const status of [302, 303]) {
      const res = await f()(`${server.base}${redirect(status, '/echo')}`, {
        method: 'POST',
        body: 'drop me',
        headers: { 'content-type': 'text/plain' },
      });
      expect(await res.json()).toMatchObject({ method: 'GET', body: '', contentType: null });
    }
  });

  test('the Authorization header follows a redirect within the origin, not to another origin', async () => {
    const headers = { authorization: 'Bearer secret' };
    const same = await f()(`${server.base}${redirect(302, '/echo')}`, { headers });
    expect(await same.json()).toMatchObject({ authorization: 'Bearer secret' });
    const cross = await f()(`${server.base}${redirect(302, `${other.base}/echo`)}`, { headers });
    expect(await cross.json()).toMatchObject({ authorization: null });
  });

  test('redirect: "manual" returns the redirect as is; "error" rejects it', async () => {
    const res = await f()(`${server.base}${redirect(302, '/echo')}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/echo');
    await rejection(f()(`${server.base}${redirect(302, '/echo')}`, { redirect: 'error' }));
  });

  test('more than maxRedirects redirects is an error', async () => {
    const before = server.requests.length;
    expect((await rejection(f()(`${server.base}/loop`))).message).toMatch(/too many redirects: .* more than 5 times/);
    expect(server.requests.length - before).toBe(6);
    expect((await rejection(make('127.0.0.1', undefined, { maxRedirects: 1 })(`${server.base}/loop`))).message).toMatch(
      /more than 1 times/,
    );
  });

  test('the caller’s AbortSignal aborts the call', async () => {
    const controller = new AbortController();
    const res = await f()(`${server.base}/never`, { signal: controller.signal });
    controller.abort();
    // A DOMException, which is no Error of jest's realm: compare names.
    await expect(res.text()).rejects.toMatchObject({ name: 'AbortError' });
    await expect(f()(`${server.base}/echo`, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});

describe('refused calls connect nowhere', () => {
  let dispatch: jest.SpyInstance;
  beforeEach(() => {
    dispatch = jest.spyOn(Agent.prototype, 'dispatch');
  });
  afterEach(() => dispatch.mockRestore());
  const dispatchedOrigins = () => dispatch.mock.calls.map(([opts]) => String((opts as { origin: unknown }).origin));

  test.each(['http://169.254.169.254/latest', 'http://10.0.0.1/'])(
    'a redirect to %s is refused before any socket',
    async (target) => {
      const err = await rejection(make('127.0.0.1')(`${server.base}${redirect(302, target)}`));
      expect(err).toBeInstanceOf(OutboundRefusedError);
      expect(err.message).toContain(`${target} resolves to`);
      expect(dispatchedOrigins()).toEqual([server.base]); // only the first hop was ever sent
    },
  );

  test('a redirect to another scheme is refused', async () => {
    const err = await rejection(make('127.0.0.1')(`${server.base}${redirect(302, 'file:///etc/passwd')}`));
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect((err as OutboundRefusedError).reason).toBe('scheme');
  });

  test('without an allowlist, 127.0.0.1 itself is refused', async () => {
    const before = server.connections;
    const err = await rejection(make('')(`${server.base}/echo`));
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect(server.connections).toBe(before);
    expect(dispatch).not.toHaveBeenCalled();
  });

  test('DNS rebinding: public at check time, 127.0.0.1 at connect time, is refused by the socket’s lookup', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => [
      ++calls === 1 ? { address: '93.184.216.34', family: 4 } : { address: '127.0.0.1', family: 4 },
    ];
    const before = server.connections;
    const err = await rejection(make('', rebinding)(`http://rebind.test:${server.port}/echo`));
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect(err.message).toMatch(/^rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(calls).toBe(2); // checkUrl, then the socket's lookup
    expect(server.connections).toBe(before);
  });
});

test('a host-name allowlist: the socket connects to the address the policy’s resolver gave', async () => {
  const resolver: Resolver = async (host) => (host === 'mcp.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
  const res = await make('mcp.test', resolver)(`http://mcp.test:${server.port}/echo`);
  expect(await res.json()).toMatchObject({ method: 'GET' });
});
