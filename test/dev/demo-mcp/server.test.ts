// The demo MCP server through the SDK's own client, the way the worker will use it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { DEMO_MCP_TOOLS, DemoMcpServer, startDemoMcpServer } from '../../../src/dev/demo-mcp/server';
import { waitUntil } from '../../support/wait-until';

let server: DemoMcpServer;
let client: Client;

async function connect(): Promise<Client> {
  const c = new Client({ name: 'demo-mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return c;
}

// A unit test has 10 s: each wait gives up well before, saying what it waited for.
const WAIT = { timeoutMs: 5000, stepMs: 20 };

const textOf = (r: any): string => r.content.map((c: any) => c.text).join('');

beforeAll(async () => {
  server = await startDemoMcpServer({ port: 0 });
  client = await connect();
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

test('serves /mcp on loopback and answers /health', async () => {
  expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
  const res = await fetch(`http://127.0.0.1:${server.port}/health`);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ ok: true });
});

test('lists its tools with descriptions and input schemas', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual([...DEMO_MCP_TOOLS]);
  for (const t of tools) {
    expect(t.description).toBeTruthy();
    expect(t.inputSchema.type).toBe('object');
  }
  expect(tools.find((t) => t.name === 'add')!.inputSchema.required).toEqual(['a', 'b']);
});

test('add, multiply and random_number compute', async () => {
  expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 40.5 } }))).toBe('42.5');
  expect(textOf(await client.callTool({ name: 'multiply', arguments: { a: 6, b: 7 } }))).toBe('42');
  const n = Number(textOf(await client.callTool({ name: 'random_number', arguments: { min: 3, max: 5 } })));
  expect([3, 4, 5]).toContain(n);
  const bad = await client.callTool({ name: 'random_number', arguments: { min: 5, max: 3 } });
  expect(bad.isError).toBe(true);
});

test('current_time answers UTC and local time, and an error result for a bad time zone', async () => {
  const ok = await client.callTool({ name: 'current_time', arguments: { time_zone: 'Asia/Tokyo' } });
  expect(ok.isError).toBeFalsy();
  expect(textOf(ok)).toMatch(/^UTC: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\nLocal \(Asia\/Tokyo\): .*GMT\+9/);
  const bad = await client.callTool({ name: 'current_time', arguments: { time_zone: 'Mars/Olympus_Mons' } });
  expect(bad.isError).toBe(true);
  expect(textOf(bad)).toContain('unknown time zone "Mars/Olympus_Mons"');
});

test('input outside the schema is an error result', async () => {
  const r = await client.callTool({ name: 'slow_count', arguments: { to: 61 } });
  expect(r.isError).toBe(true);
});

test('slow_count reports each step as progress', async () => {
  const seen: Progress[] = [];
  const r = await client.callTool({ name: 'slow_count', arguments: { to: 3, interval_ms: 20 } }, undefined, {
    onprogress: (p) => seen.push(p),
  });
  expect(textOf(r)).toBe('counted to 3');
  expect(seen.map((p) => [p.progress, p.total])).toEqual([
    [1, 3],
    [2, 3],
    [3, 3],
  ]);
});

test('cancelling slow_count aborts the handler on the server', async () => {
  const before = server.stats();
  const ac = new AbortController();
  let steps = 0;
  const call = client.callTool({ name: 'slow_count', arguments: { to: 60, interval_ms: 100 } }, undefined, {
    signal: ac.signal,
    onprogress: () => {
      if (++steps === 2) ac.abort(new Error('user cancelled'));
    },
  });
  await expect(call).rejects.toThrow();
  // An abort is counted only while the handler runs: a cancel that did not reach it would let it
  // count on to 60 and end without one.
  await waitUntil(
    'the server to count the handler aborted',
    () => server.stats().aborts,
    (n) => n === before.aborts + 1,
    WAIT,
  );
  expect(server.stats().callsByTool.slow_count).toBe((before.callsByTool.slow_count ?? 0) + 1);
  // The session survives the cancel.
  expect(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).toBe('2');
});

test('sessions end on DELETE, and close() ends open sessions with their calls', async () => {
  const other = await connect();
  await waitUntil(
    'a second session',
    () => server.stats().sessions,
    (n) => n === 2,
    WAIT,
  );
  await (other.transport as StreamableHTTPClientTransport).terminateSession();
  await other.close();
  await waitUntil(
    'the DELETEd session to end',
    () => server.stats().sessions,
    (n) => n === 1,
    WAIT,
  );

  // A separate server: close() must not wait for a call in progress or a client that never hangs up.
  const own = await startDemoMcpServer({ port: 0 });
  const c = new Client({ name: 'demo-mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(own.url)));
  const pending = c.callTool({ name: 'slow_count', arguments: { to: 60 } }).catch((e) => e);
  await waitUntil(
    'the slow call to start',
    () => own.stats().calls,
    (n) => n === 1,
    WAIT,
  );
  // The call counts for 60 s (a step a second): a close() that waited for it, or for the client
  // to hang up, would not return within the test's 10 s.
  await own.close();
  expect(own.stats()).toMatchObject({ sessions: 0, aborts: 1 });
  // The client would wait for its own request timeout (it retries the stream): closing it ends the call.
  await c.close();
  expect(await pending).toBeInstanceOf(Error);
});
