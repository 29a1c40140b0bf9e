// MCP tool servers end to end (real processes, real MCP servers on loopback,
// allowlisted): server-everything over Streamable HTTP and over the legacy
// SSE transport, and a bearer-protected server built with the SDK. A
// multi-turn loop, parallel calls, a tool error the model recovers from, an
// unreachable server, bad credentials, kill -9 of the worker during a long
// call and twice during one call (sent at most twice), cancel during a call
// (the MCP request is aborted), and the outbound policy at submit and on a
// redirect.
import { KEY_A, postStream, readSse, SseEvent, useStack, waitUntil, withTemporal } from './helpers';
import { startEverything, Everything } from '../mcp/everything';
import { startBearerMcpServer, BearerMcpServer } from '../mcp/fixtures/bearer-server';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { Client } from '@temporalio/client';

jest.setTimeout(180_000);
const TOKEN = 'mcp-token-e2e-0123456789';
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000', OUTBOUND_ALLOWLIST: '127.0.0.1' });
const call = (...args: Parameters<ReturnType<typeof useStack>['call']>) => ctx.call(...args);
let everything: Everything;
let everythingSse: Everything;
let bearer: BearerMcpServer;

beforeAll(async () => {
  [everything, everythingSse, bearer] = await Promise.all([
    startEverything('streamableHttp'),
    startEverything('sse'),
    startBearerMcpServer({ token: TOKEN }),
  ]);
});
afterAll(async () => {
  await Promise.all([everything?.stop(), everythingSse?.stop(), bearer?.close()]);
});

const everythingServer = () => ({ serverName: 'everything', serverUrl: everything.url });
const bearerServer = (auth: object = { type: 'bearer', token: TOKEN }) => ({
  serverName: 'secure',
  serverUrl: bearer.url,
  auth,
});

function expectGapFree(events: SseEvent[]): void {
  expect(events.map((e) => e.data.seq)).toEqual(events.map((_, i) => i + 1));
}

async function events(taskId: string, after = 0, until?: (e: SseEvent) => boolean): Promise<SseEvent[]> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}`, 'last-event-id': String(after) },
  });
  return readSse(res, until);
}

/** The send count in the heartbeat Temporal holds for the task's pending MCP call. */
async function sendsCounted(client: Client, taskId: string): Promise<number> {
  const { raw } = await client.workflow.getHandle(taskId).describe();
  const pending = raw.pendingActivities?.find((a) => a.activityType?.name === 'callMcpTool');
  if (!pending?.heartbeatDetails?.payloads?.length) return 0;
  const beat = await decodeFromPayloadsAtIndex<{ sends?: number }>(
    client.options.loadedDataConverter,
    0,
    pending.heartbeatDetails.payloads,
  );
  return beat?.sends ?? 0;
}

const toolResponses = (evs: { type: string; content?: string }[]) =>
  evs.filter((e) => e.type === 'agent_tool_response').map((e) => JSON.parse(e.content!));

test('a multi-turn loop over server-everything (Streamable HTTP): namespaced tools, results back to the model', async () => {
  const message = '[[tool name=get-sum args={"a":2,"b":40}]] [[tool name=echo args={"message":"hello mcp"} turn=2]] go';
  const r = await postStream(ctx.stack(), { message, mcp_servers: [everythingServer()] });
  const evs = await readSse(r);
  expectGapFree(evs);
  const uses = evs.filter((e) => e.data.type === 'agent_tool_use').map((e) => JSON.parse(e.data.content));
  expect(uses).toEqual([
    { tool: 'everything__get-sum', input: { a: 2, b: 40 } },
    { tool: 'everything__echo', input: { message: 'hello mcp' } },
  ]);
  expect(toolResponses(evs.map((e) => e.data))).toEqual([
    { tool: 'everything__get-sum', content: expect.stringContaining('42') },
    { tool: 'everything__echo', content: expect.stringContaining('hello mcp') },
  ]);
  expect(evs.at(-1)!.data.type).toBe('agent_completed');
  // The model saw each tool under its namespaced name, with the server's description and schema.
  const request = ctx.stack().model!.received().at(-1)!.body as {
    tools: { function: { name: string; description: string; parameters: { properties: object } } }[];
  };
  const sum = request.tools.find((t) => t.function.name === 'everything__get-sum')!;
  expect(sum.function.description).toBe('Returns the sum of two numbers');
  expect(Object.keys(sum.function.parameters.properties)).toEqual(['a', 'b']);
  // In the Web UI each call is an activity summarised <server>/<tool>.
  const summaries = await withTemporal(ctx.stack(), async (client) => {
    const history = await client.workflow.getHandle(r.headers.get('x-task-id')!).fetchHistory();
    const { payloadConverter, payloadCodecs } = client.options.loadedDataConverter;
    // Summaries are encrypted like every payload; the Web UI reads them through the codec endpoint.
    const decode = async (p: object) => {
      let out = [p];
      for (const codec of [...payloadCodecs].reverse()) out = await codec.decode(out);
      return payloadConverter.fromPayload(out[0]);
    };
    const scheduled = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes && e.userMetadata?.summary,
    );
    return Promise.all(scheduled.map((e) => decode(e.userMetadata!.summary!)));
  });
  expect(summaries).toEqual(['everything: list tools', 'everything/get-sum', 'everything/echo']);
});

test('the legacy HTTP+SSE transport (an /sse URL) works through the fallback', async () => {
  const r = await call('POST', '/', {
    body: {
      message: '[[tool name=get-sum args={"a":1,"b":2}]] sse',
      mcpServers: [{ serverName: 'legacy', serverUrl: everythingSse.url }],
    },
  });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  expect(toolResponses(r.json.events)).toEqual([{ tool: 'legacy__get-sum', content: expect.stringContaining('3') }]);
});

test('parallel calls on a bearer-protected server (oauth access token), listed across pages; a tool error is a result the model recovers from', async () => {
  bearer.reset();
  const message =
    '[[tool name=echo count=3 args={"text":"n{{call}}"}]] [[tool name=fail args={"message":"disk full"} turn=2]] go';
  const r = await call('POST', '/', {
    body: { message, mcp_servers: [bearerServer({ type: 'oauth', oauth: { accessToken: TOKEN } })] },
  });
  expect(r.json.status).toBe('completed');
  const responses = r.json.events.filter((e: { type: string }) => e.type === 'agent_tool_response');
  expect(
    responses
      .slice(0, 3)
      .map((e: { content: string }) => JSON.parse(e.content).content)
      .sort(),
  ).toEqual(['n1', 'n2', 'n3']);
  expect(responses[3]).toMatchObject({ is_error: true });
  expect(JSON.parse(responses[3].content).content).toContain('disk full');
  expect(r.json.output).toContain('tool said: Error');
  expect(bearer.stats().calls.map((c) => c.tool)).toEqual(['echo', 'echo', 'echo', 'fail']);
  expect(bearer.stats().unauthorized).toBe(0);
  // `fail` is on the second page of tools/list.
  const tools = (ctx.stack().model!.received().at(-1)!.body as { tools: { function: { name: string } }[] }).tools.map(
    (t) => t.function.name,
  );
  expect(tools).toEqual(expect.arrayContaining(['secure__echo', 'secure__sleep', 'secure__fail', 'secure__boom']));
});

test('an unreachable server ends the run after a short retry with mcp_unavailable naming it; bad credentials too', async () => {
  const dead = await call('POST', '/', {
    body: { message: 'hi', mcp_servers: [{ serverName: 'gone', serverUrl: 'http://127.0.0.1:9/mcp' }] },
  });
  expect(dead.json).toMatchObject({ status: 'failed', error: { type: 'mcp_unavailable' } });
  expect(dead.json.error.message).toContain('"gone"');
  // Never a hang: the listing was tried three times at most (workflows/mcp-setup.ts), then the run failed.
  const attempt = await withTemporal(ctx.stack(), async (client) => {
    const history = (await client.workflow.getHandle(dead.json.task_id).fetchHistory()).events ?? [];
    const listing = history.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'listMcpTools')!;
    const started = history.find(
      (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(listing.eventId),
    );
    return started?.activityTaskStartedEventAttributes?.attempt;
  });
  expect(attempt).toBeGreaterThanOrEqual(1);
  expect(attempt).toBeLessThanOrEqual(3);
  const before = bearer.stats().unauthorized;
  const denied = await call('POST', '/', {
    body: { message: 'hi', mcp_servers: [bearerServer({ type: 'bearer', token: 'wrong-token-xyz' })] },
  });
  expect(denied.json).toMatchObject({ status: 'failed', error: { type: 'mcp_unavailable' } });
  expect(denied.json.error.message).toContain('401');
  expect(denied.json.error.message).not.toContain('wrong-token-xyz');
  // Not retried: 401 answers the same every time.
  expect(bearer.stats().unauthorized - before).toBeLessThanOrEqual(2);
  const noAuth = await call('POST', '/', {
    body: { message: 'hi', mcp_servers: [{ serverName: 'secure', serverUrl: bearer.url }] },
  });
  expect(noAuth.json.error.type).toBe('mcp_unavailable');
});

test('kill -9 of the worker during a long tool call: the run completes and the resumed stream has no duplicate event', async () => {
  const message = '[[tool name=trigger-long-running-operation args={"duration":6,"steps":6}]] long';
  const r = await call('POST', '/', { body: { message, background: true, mcp_servers: [everythingServer()] } });
  const id = r.json.task_id;
  const before = await events(id, 0, (e) => e.data.type === 'agent_tool_use');
  // The kill comes once Temporal has the call's send counted: the call is under way at the server.
  await withTemporal(ctx.stack(), (client) =>
    waitUntil(
      'the long call counted as sent',
      () => sendsCounted(client, id),
      (n) => n >= 1,
    ),
  );
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const after = await events(id, Number(before.at(-1)!.id));
  const all = [...before, ...after];
  expectGapFree(all);
  expect(all.at(-1)!.data.type).toBe('agent_completed');
  expect(toolResponses(all.map((e) => e.data))).toEqual([
    {
      tool: 'everything__trigger-long-running-operation',
      content: expect.stringContaining('Long running operation completed'),
    },
  ]);
  expect((await call('GET', `/tasks/${id}/result?wait=30`)).json.status).toBe('completed');
});

test('a call whose outcome is unknown after a crash is sent once more at most, then the model is told', async () => {
  bearer.reset();
  const r = await call('POST', '/', {
    body: {
      message: '[[tool name=sleep args={"ms":60000,"label":"twice"}]] crash',
      background: true,
      mcp_servers: [bearerServer()],
    },
  });
  const id = r.json.task_id;
  for (const sends of [1, 2]) {
    // The kill comes once Temporal has the send counted: a crash in the instant before that can
    // add a send (docs/api.md, MCP tool servers), which a loaded machine hits if the kill follows the request at once.
    await waitUntil(
      `send ${sends} of the call at the server`,
      () => bearer.stats().calls.length,
      (n) => n === sends,
    );
    await withTemporal(ctx.stack(), (client) =>
      waitUntil(
        `send ${sends} counted in Temporal's heartbeat`,
        () => sendsCounted(client, id),
        (n) => n === sends,
      ),
    );
    ctx.stack().children.worker.proc.kill('SIGKILL');
    await ctx.stack().children.worker.exited;
    await ctx.stack().startWorker();
  }
  const result = await call('GET', `/tasks/${id}/result?wait=60`);
  expect({ status: result.json.status, sends: bearer.stats().calls.length }).toEqual({ status: 'completed', sends: 2 });
  const [response] = toolResponses(result.json.events);
  expect(response.content).toContain('outcome of this call is unknown');
  expect(bearer.stats().calls).toHaveLength(2);
});

test('cancel during an MCP call aborts the request on the server', async () => {
  bearer.reset();
  const r = await call('POST', '/', {
    body: {
      message: '[[tool name=sleep args={"ms":60000,"label":"cancel-me"}]] wait',
      background: true,
      mcp_servers: [bearerServer()],
    },
  });
  const id = r.json.task_id;
  await waitUntil(
    'the sleep call at the server',
    () => bearer.stats().calls.length,
    (n) => n === 1,
  );
  expect(bearer.stats().aborted).toEqual([]);
  expect((await call('POST', `/tasks/${id}/cancel`)).status).toBe(202);
  // The call sleeps 60 s, past this wait: only an abort of its request ends it early, and the server records that.
  await waitUntil(
    'the server to record the sleep call aborted',
    () => bearer.stats().aborted,
    (labels) => labels.includes('cancel-me'),
  );
  await waitUntil(
    'the task to be cancelled',
    async () => (await call('GET', `/tasks/${id}`)).json.status === 'cancelled',
  );
});

test('the outbound policy: refused URLs are a 422 naming the server; a redirect to a link-local address is not followed', async () => {
  for (const [url, why] of [
    ['http://10.1.2.3/mcp', 'private'],
    ['http://169.254.169.254/latest', 'link-local'],
    ['http://[fd00::1]/mcp', 'unique-local'],
    ['ftp://files.example.com/mcp', 'ftp:'],
  ]) {
    const r = await call('POST', '/', {
      body: { message: 'hi', mcp_servers: [{ serverName: 'bad', serverUrl: url }] },
    });
    expect({ url, status: r.status }).toEqual({ url, status: 422 });
    expect(r.json.error.details).toEqual([
      expect.objectContaining({ path: 'body.mcp_servers[0].serverUrl', code: 'outbound_refused' }),
    ]);
    expect(r.json.error.message).toContain('"bad"');
    expect(r.json.error.message).toContain(why);
  }
  const redirect = `${bearer.baseUrl}/redirect-to?url=${encodeURIComponent('http://169.254.169.254/mcp')}`;
  const r = await call('POST', '/', {
    body: { message: 'hi', mcp_servers: [{ serverName: 'hop', serverUrl: redirect }] },
  });
  expect(r.json).toMatchObject({ status: 'failed', error: { type: 'mcp_unavailable' } });
  expect(r.json.error.message).toContain('"hop"');
  expect(r.json.error.message).toMatch(/link-local|not followed/);
});

test('a handoff: the next model request carries the agent instructions (with system and rules); the session next run starts with that agent', async () => {
  const agents = [
    { name: 'billing', description: 'Answers questions about invoices' },
    { name: 'support', description: 'Fixes technical problems' },
  ];
  const body = { system: 'You work for Acme.', rules: ['Answer in one sentence.'], agents };
  const model = ctx.stack().model!;
  const systemOf = (i: number) =>
    (model.received()[i].body as { messages: { role: string; content: string }[] }).messages[0].content;
  const toolsOf = (i: number) =>
    (model.received()[i].body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
  model.reset();
  const r = await postStream(ctx.stack(), {
    ...body,
    message: '[[tool name=transfer_to_billing]] my invoice is wrong',
  });
  const evs = await readSse(r);
  expect(evs.find((e) => e.data.type === 'agent_handoff')!.data).toMatchObject({
    type: 'agent_handoff',
    from: 'main',
    to: 'billing',
  });
  expect(evs.at(-1)!.data.type).toBe('agent_completed');
  expect(evs.find((e) => e.data.type === 'agent_response')!.data.content).toBe(
    'tool said: Transferred the conversation to the billing agent.',
  );
  expect(systemOf(0)).not.toContain('billing agent');
  expect(systemOf(0)).toContain('Answer in one sentence.');
  expect(toolsOf(0)).toEqual(expect.arrayContaining(['transfer_to_billing', 'transfer_to_support']));
  expect(systemOf(1)).toContain('You work for Acme.');
  expect(systemOf(1)).toContain('You are the billing agent: Answers questions about invoices');
  expect(systemOf(1)).toContain('Answer in one sentence.');
  expect(toolsOf(1)).not.toContain('transfer_to_billing');
  const session = r.headers.get('x-session-id')!;
  const next = await call('POST', `/?session=${session}`, { body: { ...body, message: 'and the refund?' } });
  expect(next.json.status).toBe('completed');
  expect(systemOf(2)).toContain('You are the billing agent');
});
