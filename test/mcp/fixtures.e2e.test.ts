// The MCP test fixtures work with the SDK's own client: if one of these fails,
// the MCP tests built on them would fail for the wrong reason.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { BearerMcpServer, epochNow, startBearerMcpServer } from './fixtures/bearer-server';
import { Everything, startEverything } from './everything';
import { waitUntil } from '../support/wait-until';

const TOKEN = 'fixture-token-0123456789';

async function connect(transport: Transport): Promise<Client> {
  const c = new Client({ name: 'fixtures-test', version: '1.0.0' });
  await c.connect(transport);
  return c;
}

const bearer = (url: string, token = TOKEN) =>
  new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
const textOf = (r: any): string => r.content.map((c: any) => c.text).join('');

describe('bearer MCP server', () => {
  let server: BearerMcpServer;
  let client: Client | undefined;
  beforeAll(async () => {
    server = await startBearerMcpServer({ token: TOKEN });
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    server.reset();
  });
  afterAll(() => server?.close());

  test('401 with WWW-Authenticate without the token, counted', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    await expect(connect(new StreamableHTTPClientTransport(new URL(server.url)))).rejects.toThrow();
    await expect(connect(bearer(server.url, 'wrong-token'))).rejects.toThrow();
    expect(server.stats().unauthorized).toBe(3);
  });

  test('with the token: tools/list takes pages, tools answer', async () => {
    client = await connect(bearer(server.url));
    const first = await client.listTools();
    expect(first.tools).toHaveLength(2);
    expect(first.nextCursor).toBeDefined();
    const names = first.tools.map((t) => t.name);
    for (let cursor = first.nextCursor; cursor !== undefined;) {
      const page = await client.listTools({ cursor });
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    }
    expect(names).toEqual(['echo', 'sleep', 'fail', 'boom']);

    const before = epochNow();
    const wallBefore = Date.now();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    const failed = await client.callTool({ name: 'fail', arguments: { message: 'nope' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    await expect(client.callTool({ name: 'boom', arguments: {} })).rejects.toThrow(/boom/);

    const s = server.stats();
    expect(s.calls.map((c) => c.tool)).toEqual(['echo', 'fail', 'boom']);
    expect(s.calls[0].args).toEqual({ text: 'hi' });
    expect(s.toolCallArrivals).toHaveLength(3);
    expect(s.answers).toHaveLength(3);
    // Same clock as Date.now(), with fractions.
    expect(s.toolCallArrivals[0]).toBeGreaterThanOrEqual(before);
    expect(s.answers[2]).toBeGreaterThanOrEqual(wallBefore - 1000);
    expect(s.answers[2]).toBeLessThanOrEqual(Date.now() + 1000);
    s.toolCallArrivals.forEach((t, i) => expect(s.answers[i]).toBeGreaterThanOrEqual(t));
  });

  test('a cancelled sleep is aborted in the handler and recorded', async () => {
    client = await connect(bearer(server.url));
    const ac = new AbortController();
    const call = client.callTool({ name: 'sleep', arguments: { ms: 30_000, label: 'nap' } }, undefined, {
      signal: ac.signal,
    });
    await waitUntil(
      'the sleep call at the server',
      () => server.stats().calls.length,
      (n) => n === 1,
      { stepMs: 20 },
    );
    ac.abort();
    await expect(call).rejects.toThrow();
    // The sleep is 30 s, past this wait: only the abort ends it early.
    await waitUntil(
      'the server to record the sleep aborted',
      () => server.stats().aborted.length,
      (n) => n === 1,
      { stepMs: 20 },
    );
    expect(server.stats()).toMatchObject({ aborted: ['nap'], answers: [] });
    expect(textOf(await client.callTool({ name: 'sleep', arguments: { ms: 1 } }))).toBe('slept 1 ms');
  });

  test('redirect routes answer 307', async () => {
    const target = 'http://169.254.169.254/latest/meta-data/';
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${server.baseUrl}/redirect-to?url=${encodeURIComponent(target)}`, {
        method,
        redirect: 'manual',
      });
      expect(res.status).toBe(307);
      expect(res.headers.get('location')).toBe(target);
    }
    const res = await fetch(`${server.baseUrl}/mcp-redirect`, { method: 'POST', redirect: 'manual' });
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe('/mcp');
    // fetch keeps the Authorization header on this same-origin hop, so the SDK client works through it.
    client = await connect(bearer(`${server.baseUrl}/mcp-redirect`));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'via redirect' } }))).toBe('via redirect');
  });
});

describe('server-everything', () => {
  let everything: Everything | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    await everything?.stop();
    client = everything = undefined;
  });

  test('over Streamable HTTP: lists tools and calls get-sum', async () => {
    everything = await startEverything('streamableHttp');
    expect(everything.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    client = await connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get-sum', 'trigger-long-running-operation']));
    expect(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }))).toContain('5');
  });

  test('over legacy SSE: lists tools and calls get-sum', async () => {
    everything = await startEverything('sse');
    expect(everything.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sse$/);
    client = await connect(new SSEClientTransport(new URL(everything.url)));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('get-sum');
    expect(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 20, b: 22 } }))).toContain('42');
  });
});
