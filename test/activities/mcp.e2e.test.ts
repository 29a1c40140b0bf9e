// The MCP activities against a real MCP server on loopback (the SDK-built
// bearer fixture) through the outbound policy's fetch: listing follows every
// page; a call publishes its result once; a tool's error is a result for the
// model; a call already sent twice is not sent again; a session the server lost
// is opened anew; refused and unreachable servers fail the way the workflow
// expects (mcp_unavailable, not retried when permanent).
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createMcpActivities } from '../../activities/mcp/mcp-activities';
import { McpPool } from '../../activities/mcp/pool';
import { policyFetch, PolicyFetch } from '../../src/common/outbound/fetch';
import { OutboundPolicy } from '../../src/common/outbound/policy';
import { EventPublisher } from '../../src/common/relay/publisher';
import { PrivateRedis, startPrivateRedis } from '../common/relay/private-redis';
import { startBearerMcpServer, BearerMcpServer } from '../mcp/fixtures/bearer-server';
import { startDemoMcpServer } from '../../src/dev/demo-mcp/server';

const logger = pino({ level: 'silent' });
const TOKEN = 'activity-test-token-123';
let redis: PrivateRedis;
let publisher: EventPublisher;
let server: BearerMcpServer;
let fetchAllowed: PolicyFetch;
let fetchDefault: PolicyFetch;
let pool: McpPool;

beforeAll(async () => {
  [redis, server] = await Promise.all([startPrivateRedis(), startBearerMcpServer({ token: TOKEN })]);
  publisher = new EventPublisher({ redis: redis.redis, logger, ttlMs: 60_000 });
  fetchAllowed = policyFetch(new OutboundPolicy('127.0.0.1'));
  fetchDefault = policyFetch(new OutboundPolicy(''));
  pool = new McpPool({ fetch: fetchAllowed, logger });
});
afterAll(async () => {
  await pool?.close();
  await Promise.all([fetchAllowed?.close(), fetchDefault?.close(), server?.close(), redis?.stop()]);
});

const config = { MCP_CALL_TIMEOUT_MS: 10_000, MCP_CONNECT_TIMEOUT_MS: 5000 };
const acts = (p = pool) => createMcpActivities({ publisher, mcpPool: p, logger, config } as never);
const srv = () => ({ name: 'secure', url: server.url, token: TOKEN });

function callInput(taskId: string, tool: string, args: object) {
  return {
    taskId,
    session: 's',
    account: 'acct',
    producer: 's1:t0',
    floor: 0,
    server: srv(),
    tool,
    call: { id: 'call_1', name: `secure__${tool}`, arguments: JSON.stringify(args) },
    maxChars: 1000,
  };
}

type Out = { content: string; isError: boolean; lastSeq: number };
type Listed = { server: string; tools: { name: string; inputSchema?: object }[] };
const env = (details?: unknown) =>
  new MockActivityEnvironment({
    heartbeatTimeoutMs: 10_000,
    ...(details !== undefined && { heartbeatDetails: details }),
  });
const callTool = (input: ReturnType<typeof callInput>, details?: unknown) =>
  env(details).run(acts().callMcpTool, input) as Promise<Out>;

test('listing follows every page of tools/list', async () => {
  const listed = (await env().run(acts().listMcpTools, { account: 'acct', server: srv() })) as Listed;
  expect(listed.server).toBe('secure');
  expect(listed.tools.map((t) => t.name)).toEqual(['echo', 'sleep', 'fail', 'boom']);
  expect(listed.tools[0].inputSchema).toMatchObject({ type: 'object' });
});

test('a call publishes its result once; a tool error and a JSON-RPC error are results for the model', async () => {
  server.reset();
  const r = await callTool(callInput('task_mcp1', 'echo', { text: 'hi' }));
  expect(r).toEqual({ content: 'hi', isError: false, lastSeq: 1 });
  const events = await publisher.readAfter('task_mcp1', 0);
  expect(events).toEqual([
    expect.objectContaining({
      type: 'agent_tool_response',
      content: JSON.stringify({ tool: 'secure__echo', content: 'hi' }),
    }),
  ]);
  const failed = await callTool(callInput('task_mcp2', 'fail', { message: 'nope' }));
  expect(failed).toMatchObject({ isError: true, content: expect.stringContaining('nope') });
  const boom = await callTool(callInput('task_mcp3', 'boom', {}));
  expect(boom.isError).toBe(true);
  const badArgs = await callTool({
    ...callInput('task_mcp4', 'echo', {}),
    call: { id: 'c', name: 'secure__echo', arguments: '[1]' },
  });
  expect(badArgs).toMatchObject({ isError: true, content: 'Error: the arguments must be a JSON object' });
  expect(server.stats().calls.map((c) => c.tool)).toEqual(['echo', 'fail', 'boom']);
});

test('a call its heartbeats say was sent twice already is not sent again', async () => {
  server.reset();
  const r = await callTool(callInput('task_mcp5', 'echo', { text: 'again' }), { sends: 2 });
  expect(r.isError).toBe(true);
  expect(r.content).toContain('outcome of this call is unknown');
  expect(server.stats().calls).toHaveLength(0);
  // Sent once before: this attempt may send it again.
  expect((await callTool(callInput('task_mcp6', 'echo', { text: 'again' }), { sends: 1 })).content).toBe('again');
});

test('a session the server lost (restarted on the same port) is opened anew: at most one retried attempt', async () => {
  const port = server.port;
  await callTool(callInput('task_mcp7', 'echo', { text: 'before' }));
  await server.close();
  server = await startBearerMcpServer({ token: TOKEN, port });
  // The pooled connection's socket is gone: that attempt fails as a transport error (Temporal retries
  // it); the next finds the session unknown (404), opens a new one and sends the call.
  let r: Out | undefined;
  for (let sends = 0; !r && sends < 2; sends++) {
    r = await callTool(callInput('task_mcp8', 'echo', { text: 'after' }), { sends }).catch((err) => {
      expect(err).toMatchObject({ type: 'mcp_transport', nonRetryable: false });
      return undefined;
    });
  }
  expect(r?.content).toBe('after');
  expect(server.stats().calls).toEqual([expect.objectContaining({ tool: 'echo', args: { text: 'after' } })]);
});

test('a refused or unreachable server fails as mcp_unavailable; a refusal and bad credentials are not retried', async () => {
  const strict = new McpPool({ fetch: fetchDefault, logger });
  try {
    const refused = await env()
      .run(acts(strict).listMcpTools, { account: 'acct', server: srv() })
      .catch((e: ApplicationFailure) => e);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    if (!(refused instanceof ApplicationFailure)) return;
    expect(refused).toMatchObject({ type: 'mcp_unavailable', nonRetryable: true });
    expect(refused.message).toContain('"secure"');
    expect(refused.message).toContain('loopback');
  } finally {
    await strict.close();
  }
  const dead = await env()
    .run(acts().listMcpTools, { account: 'acct', server: { name: 'dead', url: 'http://127.0.0.1:9/mcp' } })
    .catch((e) => e);
  expect(dead).toMatchObject({ type: 'mcp_unavailable', nonRetryable: false });
  const denied = (await env()
    .run(acts().listMcpTools, { account: 'acct', server: { ...srv(), token: 'wrong-token-000' } })
    .catch((e: Error) => e)) as Error;
  expect(denied).toMatchObject({ type: 'mcp_unavailable', nonRetryable: true });
  expect(denied.message).toContain('401');
  expect(denied.message).not.toContain('wrong-token-000');
});

test('MCP progress notifications heartbeat, with the progress in the details', async () => {
  const demo = await startDemoMcpServer({ port: 0 });
  try {
    const e = env();
    const beats: { sends: number; progress?: { progress: number; total?: number } }[] = [];
    e.on('heartbeat', (d: (typeof beats)[number]) => beats.push(structuredClone(d)));
    const input = {
      ...callInput('task_mcp9', 'slow_count', { to: 3, interval_ms: 50 }),
      server: { name: 'demo', url: demo.url },
    };
    const r = (await e.run(acts().callMcpTool, input)) as Out;
    expect(r.content).toBe('counted to 3');
    expect(beats[0]).toEqual({ sends: 1 });
    expect(beats.filter((b) => b.progress).map((b) => b.progress!.progress)).toEqual([1, 2, 3]);
    expect(beats.at(-1)).toMatchObject({ sends: 1, progress: { progress: 3, total: 3 } });
  } finally {
    await demo.close();
  }
});
