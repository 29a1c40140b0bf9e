// The typed client (client/) against the real service: every method, the
// typed errors, and a stream that resumes by itself after its connection is
// cut. One stack for the file, with the scripted model.
import {
  AgentClient,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  ConnectionTimeoutError,
  NotFoundError,
  ServiceUnavailableError,
  UnprocessableEntityError,
  type AgentEvent,
  type EventStream,
} from '../../client';
import { freePort } from '../../src/dev/launcher/processes';
import { KEY_A, KEY_B, useStack, waitUntil } from '../e2e/helpers';

jest.setTimeout(90_000);
const ctx = useStack();
let agent: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
});

async function collect(stream: EventStream): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

/** Seqs 1..n in order, each once: what a resumed stream must still deliver. */
const seqs = (events: AgentEvent[]) => events.map((e) => e.seq);
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const answerText = (events: AgentEvent[]) =>
  events.flatMap((e) => (e.type === 'agent_response' ? [e.content] : [])).join('');

test('run() answers the finished run as JSON; ?session continues it; sessions.messages reads it, fork copies it, clearMessages clears it', async () => {
  const first = await agent.run({ message: 'hello' });
  expect(first).toMatchObject({
    status: 'completed',
    output: 'You said: hello',
    task_id: expect.stringMatching(/^task_/),
    session: expect.any(String),
  });
  expect(first.events.map((e) => e.type)).toEqual([
    'agent_started',
    'agent_response_start',
    'agent_response',
    'agent_step',
    'agent_cost',
    'agent_completed',
  ]);
  const second = await agent.run({ message: 'again' }, { session: first.session });
  expect(second.session).toBe(first.session);
  expect(second.task_id).not.toBe(first.task_id);
  const thread = await agent.sessions.messages(first.session);
  expect(thread).toEqual({
    session: first.session,
    messages: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'You said: hello' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'You said: again' },
    ],
  });
  const forked = await agent.sessions.fork(first.session, { at: 2 });
  expect(forked).toMatchObject({ forked_from: first.session, messages: 2 });
  expect((await agent.sessions.messages(forked.session)).messages).toEqual(thread.messages.slice(0, 2));
  await agent.sessions.clearMessages(first.session);
  expect((await agent.sessions.messages(first.session)).messages).toEqual([]);
  // The fork has a thread of its own: clearing the session it came from leaves it.
  expect((await agent.sessions.messages(forked.session)).messages).toHaveLength(2);
});

test('stream() yields the typed events in seq order, tool calls included, and ends after agent_completed', async () => {
  const stream = await agent.stream({ message: '[[tool name=calculate args={"expression":"2+40"}]] compute' });
  // Known from the headers, before any event.
  expect(stream.taskId).toMatch(/^task_/);
  expect(stream.session).toEqual(expect.any(String));
  const events = await collect(stream);
  expect(seqs(events)).toEqual(oneToN(events.length));
  expect(events.map((e) => e.type)).toEqual([
    'agent_started',
    'agent_tool_use_start',
    'agent_tool_use',
    'agent_tool_response',
    'agent_step',
    'agent_response_start',
    'agent_response',
    'agent_step',
    'agent_cost',
    'agent_completed',
  ]);
  for (const e of events) expect(e).toMatchObject({ task_id: stream.taskId, session: stream.session });
  const use = events.find((e) => e.type === 'agent_tool_use');
  expect(use?.type === 'agent_tool_use' && JSON.parse(use.content)).toEqual({
    tool: 'calculate',
    input: { expression: '2+40' },
  });
  expect(answerText(events)).toBe('tool said: 42');
  expect(stream.reconnects).toBe(0);
});

/**
 * A fetch whose first event stream is cut for real (its socket aborted) once
 * `afterEvents` events have passed; every request is recorded.
 */
function cuttingFetch(afterEvents: number) {
  const requests: { method: string; url: string; lastEventId: string | null }[] = [];
  let cut = false;
  const cuttable: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    requests.push({ method: init?.method ?? 'GET', url: String(input), lastEventId: headers.get('last-event-id') });
    if (cut || headers.get('accept') !== 'text/event-stream') return fetch(input, init);
    cut = true;
    const socket = new AbortController();
    init?.signal?.addEventListener('abort', () => socket.abort(init.signal?.reason));
    const res = await fetch(input, { ...init, signal: socket.signal });
    const reader = res.body!.getReader();
    let seen = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read(); // rejects once the socket is aborted: the client sees a broken connection
        if (done) return controller.close();
        controller.enqueue(value);
        seen += (Buffer.from(value).toString().match(/^id: /gm) ?? []).length;
        if (seen >= afterEvents) socket.abort(new Error('test: connection cut'));
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: cuttable, requests };
}

test('a stream whose connection is cut mid-answer resumes with Last-Event-ID by itself: every event once, none missing', async () => {
  const cutter = cuttingFetch(5);
  const client = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A, fetch: cutter.fetch });
  const stream = await client.stream(
    { message: '[[slow delay=30 tokens=40]] take your time', streaming_tokens: true },
    { reconnectDelayMs: 50 },
  );
  const events: AgentEvent[] = [];
  let seenBeforeResume: number | undefined;
  for await (const ev of stream) {
    if (cutter.requests.length === 2 && seenBeforeResume === undefined) seenBeforeResume = events.length;
    events.push(ev);
  }
  expect(stream.reconnects).toBe(1);
  expect(cutter.requests.map((r) => [r.method, new URL(r.url).pathname])).toEqual([
    ['POST', '/'],
    ['GET', `/tasks/${stream.taskId}/events`],
  ]);
  // It resumed exactly after the last event it had handed out, which was cut short of the end.
  expect(seenBeforeResume).toBeGreaterThanOrEqual(5);
  expect(cutter.requests[1].lastEventId).toBe(String(seenBeforeResume));
  expect(seqs(events)).toEqual(oneToN(events.length));
  expect(events.at(-1)?.type).toBe('agent_completed');
  expect(events.filter((e) => e.type === 'agent_response')).toHaveLength(40);
  const result = await agent.tasks.result(stream.taskId!, { wait: 10 });
  expect(answerText(events)).toBe(result.output);
});

test('tasks.events replays a finished task from the start or after a seq, and ends at once after its last event', async () => {
  const done = await agent.run({ message: 'replay me' });
  const all = await collect(await agent.tasks.events(done.task_id));
  expect(seqs(all)).toEqual(oneToN(6));
  expect(all.map((e) => e.type)).toEqual(done.events.map((e) => e.type));
  const tail = await collect(await agent.tasks.events(done.task_id, { after: 4 }));
  expect(seqs(tail)).toEqual([5, 6]);
  // Resumed at the end: the service ends the stream without a terminal event, and so does the iterator
  // (a stream the service left open would stay open, its heartbeats and all, and hold the test to its timeout).
  expect(await collect(await agent.tasks.events(done.task_id, { after: 6 }))).toEqual([]);
});

test('runBackground, then tasks.get, update, messages, result (409 while running), cancel (409 once finished)', async () => {
  const accepted = await agent.runBackground({
    message: '[[tool name=wait args={"seconds":60}]] wait a minute',
    metadata: { from: 'test' },
  });
  expect(accepted).toMatchObject({
    task_id: expect.stringMatching(/^task_/),
    status: 'queued',
    created_at: expect.any(String),
  });
  const id = accepted.task_id;
  await waitUntil('the task running', async () => (await agent.tasks.get(id)).status === 'running');
  const updated = await agent.tasks.update(id, { metadata: { note: 'patched' } });
  expect(updated).toMatchObject({ task_id: id, status: 'running', metadata: { from: 'test', note: 'patched' } });
  expect((await agent.tasks.get(id)).metadata).toEqual({ from: 'test', note: 'patched' });
  expect(await agent.tasks.messages(id, 'a word from outside')).toEqual({ task_id: id, status: 'running', pending: 1 });
  const early = await agent.tasks.result(id).catch((e: unknown) => e);
  expect(early).toBeInstanceOf(ConflictError);
  expect(early).toMatchObject({ status: 409, type: 'conflict', details: { status: 'running' } });
  const cancelled = await agent.tasks.cancel(id);
  expect(cancelled).toMatchObject({ task_id: id, cancel_requested: true });
  const result = await agent.tasks.result(id, { wait: 30 });
  expect(result).toMatchObject({ task_id: id, status: 'cancelled', error: { type: 'cancelled' } });
  await expect(agent.tasks.cancel(id)).rejects.toBeInstanceOf(ConflictError);
});

test('tasks.list filters by session and status and pages with a cursor; listAll walks every page', async () => {
  const first = await agent.runBackground({ message: 'page 1' });
  const ids = [first.task_id];
  for (const n of [2, 3])
    ids.push((await agent.runBackground({ message: `page ${n}` }, { session: first.session })).task_id);
  for (const id of ids) expect((await agent.tasks.result(id, { wait: 30 })).status).toBe('completed');
  const session = first.session;
  await waitUntil(
    'the three completed tasks listed',
    async () => (await agent.tasks.list({ session, status: 'completed' })).tasks.length === 3,
  );
  const page1 = await agent.tasks.list({ session, limit: 2 });
  expect(page1.tasks.map((t) => t.task_id)).toEqual([ids[2], ids[1]]);
  expect(page1.next_cursor).toEqual(expect.any(String));
  const page2 = await agent.tasks.list({ session, limit: 2, cursor: page1.next_cursor! });
  expect(page2.tasks.map((t) => t.task_id)).toEqual([ids[0]]);
  expect(page2.tasks[0]).toMatchObject({ session, status: 'completed', preview: 'page 1' });
  const walked: string[] = [];
  for await (const t of agent.tasks.listAll({ session, limit: 1 })) walked.push(t.task_id);
  expect(walked).toEqual([...ids].reverse());
  expect((await agent.tasks.list({ session, status: 'running' })).tasks).toEqual([]);
});

test('idempotencyKey: a repeat answers the first task and starts nothing; the key with another body is a 422', async () => {
  const key = `client-test-${Date.now()}`;
  const a = await agent.runBackground({ message: 'once' }, { idempotencyKey: key });
  const b = await agent.runBackground({ message: 'once' }, { idempotencyKey: key });
  expect(b.task_id).toBe(a.task_id);
  expect(b.created_at).toBe(a.created_at);
  const reused = await agent
    .runBackground({ message: 'another body' }, { idempotencyKey: key })
    .catch((e: unknown) => e);
  expect(reused).toBeInstanceOf(UnprocessableEntityError);
  expect(reused).toMatchObject({ status: 422, type: 'idempotency_key_reused' });
});

test('errors are typed by status: 404, 400 with details, 401, 409, a refused connection, 503 with retryAfter', async () => {
  const missing = await agent.tasks.get('task_doesnotexist').catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(NotFoundError);
  expect(missing).toMatchObject({ name: 'NotFoundError', status: 404, type: 'not_found', details: null });
  // Another account's task is a 404 too, never its data.
  const mine = await agent.runBackground({ message: 'mine' });
  const bob = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_B });
  await expect(bob.tasks.get(mine.task_id)).rejects.toBeInstanceOf(NotFoundError);

  const bad = await agent.run({ message: 'x', mode: 'turbo' as never }).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(BadRequestError);
  expect(bad).toMatchObject({
    status: 400,
    type: 'invalid_request',
    details: [expect.objectContaining({ path: 'body.mode' })],
  });

  const stranger = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: 'not-a-key' });
  const denied = await stranger.tasks.list().catch((e: unknown) => e);
  expect(denied).toBeInstanceOf(AuthenticationError);
  expect(denied).toMatchObject({ status: 401, type: 'unauthorized' });
  expect((denied as AuthenticationError).headers.get('www-authenticate')).toMatch(/^Bearer/);
  // Errors of the first request of a stream throw from stream() itself.
  await expect(stranger.stream({ message: 'x' })).rejects.toBeInstanceOf(AuthenticationError);

  const busy = await agent.runBackground({ message: '[[slow delay=100 tokens=30]] busy' });
  const rejected = await agent
    .run({ message: 'me too', multitask: 'reject' }, { session: busy.session })
    .catch((e: unknown) => e);
  expect(rejected).toBeInstanceOf(ConflictError);

  const nowhere = new AgentClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: KEY_A });
  const refused = await nowhere.tasks.list().catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ConnectionError);
  expect(refused).toMatchObject({
    status: undefined,
    type: 'connection_error',
    message: expect.stringContaining('ECONNREFUSED'),
  });

  // A 503 as the service sends it (Temporal or Redis down), through the client's fetch hook.
  const unavailable = new AgentClient({
    baseUrl: 'http://service.invalid',
    fetch: async () =>
      new Response(
        JSON.stringify({
          error: { type: 'unavailable', message: 'Temporal is unavailable', details: { dependency: 'temporal' } },
        }),
        { status: 503, headers: { 'retry-after': '7' } },
      ),
  });
  const down = await unavailable.tasks.get('task_x').catch((e: unknown) => e);
  expect(down).toBeInstanceOf(ServiceUnavailableError);
  expect(down).toMatchObject({ status: 503, type: 'unavailable', retryAfter: 7, details: { dependency: 'temporal' } });
});

test("a call's AbortSignal and timeoutMs end it: the signal's reason, or a ConnectionTimeoutError", async () => {
  const slow = { message: '[[slow first=10000]] never mind' };
  const aborted = await agent.run(slow, { signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
  expect(aborted).toMatchObject({ name: 'TimeoutError' });
  expect(aborted).not.toBeInstanceOf(ConnectionError);
  await expect(agent.run(slow, { timeoutMs: 300 })).rejects.toBeInstanceOf(ConnectionTimeoutError);
  // A stream stops with its caller's signal while waiting for the next event.
  const stop = new AbortController();
  const stream = await agent.stream(slow, { signal: stop.signal });
  setTimeout(() => stop.abort(new Error('enough')), 300);
  await expect(collect(stream)).rejects.toThrow('enough');
});

test('defaults come from AGENT_URL and AGENT_API_KEY, else the `npm start` service and its dev key', async () => {
  const saved = { url: process.env.AGENT_URL, key: process.env.AGENT_API_KEY };
  try {
    delete process.env.AGENT_URL;
    delete process.env.AGENT_API_KEY;
    expect(new AgentClient().baseUrl).toBe('http://127.0.0.1:8080');
    process.env.AGENT_URL = `${ctx.stack().gatewayUrl}/`;
    process.env.AGENT_API_KEY = KEY_B;
    const fromEnv = new AgentClient();
    expect(fromEnv.baseUrl).toBe(ctx.stack().gatewayUrl);
    const r = await fromEnv.runBackground({ message: 'from env' });
    await expect(agent.tasks.get(r.task_id)).rejects.toBeInstanceOf(NotFoundError); // bob's, not alice's
  } finally {
    if (saved.url === undefined) delete process.env.AGENT_URL;
    else process.env.AGENT_URL = saved.url;
    if (saved.key === undefined) delete process.env.AGENT_API_KEY;
    else process.env.AGENT_API_KEY = saved.key;
  }
});

test('sessions.create (own id, 409 when taken), list with a cursor, listAll, delete (409 while a run is active, 404 after)', async () => {
  const id = `client-test-${Date.now()}`;
  const created = await agent.sessions.create({ session: id });
  expect(created).toEqual({ session: id, created_at: expect.any(String) });
  await expect(agent.sessions.create({ session: id })).rejects.toBeInstanceOf(ConflictError);
  const generated = await agent.sessions.create();
  expect(generated.session).toEqual(expect.any(String));
  expect(generated.session).not.toBe(id);
  const page = await agent.sessions.list({ limit: 1 });
  expect(page.sessions).toHaveLength(1);
  expect(page.sessions[0]).toEqual({
    session: expect.any(String),
    created_at: expect.any(String),
    open: expect.any(Boolean),
  });
  expect(page.next_cursor).toEqual(expect.any(String));
  // Every page, walked two at a time, has both new sessions (once the listing shows them).
  await waitUntil('both new sessions in the listing', async () => {
    const all: string[] = [];
    for await (const s of agent.sessions.listAll({ limit: 2 })) all.push(s.session);
    expect(new Set(all).size).toBe(all.length);
    return all.includes(id) && all.includes(generated.session);
  });
  const busy = await agent.runBackground(
    { message: '[[tool name=wait args={"seconds":60}]] hold it' },
    { session: id },
  );
  await expect(agent.sessions.delete(id)).rejects.toBeInstanceOf(ConflictError);
  await agent.tasks.cancel(busy.task_id);
  await agent.tasks.result(busy.task_id, { wait: 30 });
  await waitUntil("the session's delete, once its run has handed the turn back", () =>
    agent.sessions.delete(id).then(
      () => true,
      (e: unknown) => (e instanceof ConflictError ? false : Promise.reject(e)),
    ),
  );
  await expect(agent.sessions.delete(id)).rejects.toBeInstanceOf(NotFoundError);
});
