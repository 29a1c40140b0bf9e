// Sessions: the agent remembers earlier messages; runs of one session never
// interleave (queued by default, 409 with multitask: reject, into the running run with
// multitask: steer, after the running run is interrupted with multitask: interrupt); messages can be
// read and cleared; unknown sessions are 404. Sessions here close after 2 s
// idle, so every test also runs across closes and reopens.
import { Api, KEY_A, KEY_B, postStream, readSse, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({ SESSION_IDLE_CLOSE_MS: '2000' });
const call: Api = (...args) => ctx.call(...args);

/** A session with a workflow from the start (POST /sessions): a run that names none opens none until used again. */
async function openedSession(): Promise<string> {
  const created = await call('POST', '/sessions', { body: {} });
  expect(created.status).toBe(201);
  return created.json.session;
}

test('a continued session sends the earlier exchange to the model', async () => {
  const first = await call('POST', '/', { body: { message: 'my name is Ada' } });
  const session = first.json.session;
  ctx.stack().model!.reset();
  const second = await call('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
  expect(second.status).toBe(200);
  expect(second.json.session).toBe(session);
  const sent = ctx.stack().model!.received().at(-1)!.body as { messages: { role: string; content: string }[] };
  const contents = sent.messages.map((m) => `${m.role}:${m.content}`);
  expect(contents).toEqual(
    expect.arrayContaining(['user:my name is Ada', 'assistant:You said: my name is Ada', 'user:what is my name?']),
  );
  const msgs = await call('GET', `/sessions/${session}/messages`);
  expect(msgs.json.messages).toEqual([
    { role: 'user', content: 'my name is Ada' },
    { role: 'assistant', content: 'You said: my name is Ada' },
    { role: 'user', content: 'what is my name?' },
    { role: 'assistant', content: 'You said: what is my name?' },
  ]);
});

test('runs of one session never interleave: the second waits as queued', async () => {
  const first = await call('POST', '/', { body: { message: '[[slow delay=100 tokens=20]] first', background: true } });
  const session = first.json.session;
  await waitUntil(
    'the first run running',
    async () => (await call('GET', `/tasks/${first.json.task_id}`)).json.status === 'running',
  );
  const second = await call('POST', `/?session=${session}`, { body: { message: 'second', background: true } });
  const s2 = await call('GET', `/tasks/${second.json.task_id}`);
  expect(s2.json.status).toBe('queued');
  const r2 = await call('GET', `/tasks/${second.json.task_id}/result?wait=30`);
  const r1 = await call('GET', `/tasks/${first.json.task_id}/result?wait=30`);
  expect(r1.json.status).toBe('completed');
  expect(r2.json.status).toBe('completed');
  const v1 = await call('GET', `/tasks/${first.json.task_id}`);
  const v2 = await call('GET', `/tasks/${second.json.task_id}`);
  expect(Date.parse(v2.json.started_at)).toBeGreaterThanOrEqual(Date.parse(v1.json.completed_at));
});

test("a new session's first run holds the turn from its 202: a continuation sent at once waits for it and sees its exchange", async () => {
  const first = await call('POST', '/', {
    body: { message: '[[slow delay=50 tokens=10]] opening words', background: true },
  });
  expect(first.status).toBe(202);
  const session = first.json.session;
  // Sent before the first run can have started: the session must already count it as the active run.
  const busy = await call('POST', `/?session=${session}`, {
    body: { message: 'cut in', multitask: 'reject', background: true },
  });
  expect(busy.status).toBe(409);
  ctx.stack().model!.reset();
  const second = await call('POST', `/?session=${session}`, { body: { message: 'and then?', background: true } });
  expect(second.status).toBe(202);
  const r2 = await call('GET', `/tasks/${second.json.task_id}/result?wait=30`);
  expect(r2.json.status).toBe('completed');
  const v1 = await call('GET', `/tasks/${first.json.task_id}`);
  const v2 = await call('GET', `/tasks/${second.json.task_id}`);
  expect(v1.json.status).toBe('completed');
  expect(Date.parse(v2.json.started_at)).toBeGreaterThanOrEqual(Date.parse(v1.json.completed_at));
  const sent = ctx.stack().model!.received().at(-1)!.body as { messages: { role: string; content: string }[] };
  expect(sent.messages.map((m) => `${m.role}:${m.content}`)).toContain(
    'user:[[slow delay=50 tokens=10]] opening words',
  );
});

test('multitask: reject answers 409 while the session is busy, and the refused request leaves no task', async () => {
  const first = await call('POST', '/', { body: { message: '[[slow delay=100 tokens=20]] busy', background: true } });
  const session = first.json.session;
  await waitUntil(
    'the busy run running',
    async () => (await call('GET', `/tasks/${first.json.task_id}`)).json.status === 'running',
  );
  const r = await call('POST', `/?session=${session}`, {
    body: { message: 'me too', multitask: 'reject', background: true },
  });
  expect(r.status).toBe(409);
  expect(r.json.error.type).toBe('conflict');
  await call('GET', `/tasks/${first.json.task_id}/result?wait=30`);
  const ok = await call('POST', `/?session=${session}`, { body: { message: 'now free', multitask: 'reject' } });
  expect(ok.status).toBe(200);
  // The session's tasks are the two that ran: the refused one was never started.
  const listed = async () =>
    ((await call('GET', `/tasks?session=${session}`)).json.tasks as { task_id: string }[]).map((t) => t.task_id).sort();
  await waitUntil("the session's two tasks listed", async () => (await listed()).length >= 2);
  expect(await listed()).toEqual([first.json.task_id, ok.json.task_id].sort());
  await withTemporal(ctx.stack(), async (client) => {
    const count = await client.workflow.count(`WorkflowType = 'agentTask' AND TaskSession = '${session}'`);
    expect(count.count).toBe(2);
  });
});

test('multitask: reject on a session that closed when idle reopens it and runs', async () => {
  const session = await openedSession();
  await call('POST', `/?session=${session}`, { body: { message: 'before the close' } });
  await withTemporal(ctx.stack(), async (client) => {
    const h = client.workflow.getHandle(`session:alice:${session}`);
    await waitUntil(
      "the idle session's workflow to close",
      async () => (await h.describe()).status.name === 'COMPLETED',
      { stepMs: 200 },
    );
  });
  const again = await call('POST', `/?session=${session}`, {
    body: { message: 'after the close', multitask: 'reject' },
  });
  expect(again.status).toBe(200);
  expect(again.json).toMatchObject({ status: 'completed', session });
  expect(
    (await call('GET', `/sessions/${session}/messages`)).json.messages.map((m: { content: string }) => m.content),
  ).toContain('before the close');
});

test('messages can be cleared; unknown or foreign sessions are 404', async () => {
  const first = await call('POST', '/', { body: { message: 'remember this' } });
  const del = await call('DELETE', `/sessions/${first.json.session}/messages`);
  expect(del.status).toBe(204);
  await waitUntil(
    'the cleared thread',
    async () => (await call('GET', `/sessions/${first.json.session}/messages`)).json.messages.length === 0,
  );
  expect((await call('GET', '/sessions/sess_nope/messages')).status).toBe(404);
  expect((await call('POST', '/?session=sess_nope', { body: { message: 'hi' } })).status).toBe(404);
  expect((await call('GET', `/sessions/${first.json.session}/messages`, { key: KEY_B })).status).toBe(404);
});

test('an idle session closes, keeps its thread, and its next run reopens it; reading and clearing work while it is closed', async () => {
  await withTemporal(ctx.stack(), async (client) => {
    const session = await openedSession();
    await call('POST', `/?session=${session}`, { body: { message: 'my name is Grace' } });
    const workflow = client.workflow.getHandle(`session:alice:${session}`);
    const closed = async () => (await workflow.describe()).status.name === 'COMPLETED';
    await waitUntil("the idle session's workflow to close", closed);
    const thread = ['user:my name is Grace', 'assistant:You said: my name is Grace'];
    const read = async () =>
      ((await call('GET', `/sessions/${session}/messages`)).json.messages as { role: string; content: string }[]).map(
        (m) => `${m.role}:${m.content}`,
      );
    expect(await read()).toEqual(thread);

    ctx.stack().model!.reset();
    const second = await call('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
    expect(second.status).toBe(200);
    const sent = ctx.stack().model!.received().at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => `${m.role}:${m.content}`)).toEqual(
      expect.arrayContaining([...thread, 'user:what is my name?']),
    );
    expect(await read()).toEqual([...thread, 'user:what is my name?', 'assistant:You said: what is my name?']);

    await waitUntil("the session's workflow to close again", closed);
    expect((await call('DELETE', `/sessions/${session}/messages`)).status).toBe(204);
    await waitUntil('the cleared thread', async () => (await read()).length === 0);
  });
});

test("while another stream is open (the gateway's Temporal calls then go to its start thread), continuations, unknown sessions and idempotent repeats behave as without", async () => {
  await withTemporal(ctx.stack(), async (client) => {
    const session = await openedSession();
    await call('POST', `/?session=${session}`, { body: { message: 'my name is Lin' } });
    // Closed when idle: the continuation below must reopen it (signal-with-start from the thread).
    await waitUntil(
      "the idle session's workflow to close",
      async () => (await client.workflow.getHandle(`session:alice:${session}`).describe()).status.name === 'COMPLETED',
    );

    const open = await postStream(ctx.stack(), { message: '[[slow delay=100 tokens=60]] stay open', streaming: true });
    expect(open.status).toBe(200);
    const reader = open.body!.getReader();
    await reader.read(); // an event arrived: the gateway is relaying this stream now

    ctx.stack().model!.reset();
    const second = await call('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
    expect(second.status).toBe(200);
    expect(second.json.output).toBe('You said: what is my name?');
    const sent = ctx.stack().model!.received().at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => `${m.role}:${m.content}`)).toEqual(
      expect.arrayContaining(['user:my name is Lin', 'user:what is my name?']),
    );

    const unknown = await call('POST', '/?session=sess_nobody', { body: { message: 'hi' } });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toBe('session sess_nobody not found');

    const keyed = { body: { message: 'once', background: true }, headers: { 'idempotency-key': `k-${Date.now()}` } };
    const a = await call('POST', `/?session=${session}`, keyed);
    const b = await call('POST', `/?session=${session}`, keyed);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.json.task_id).toBe(a.json.task_id);
    expect(b.json.created_at).toBe(a.json.created_at);

    // The stream was open throughout, and ends as it should.
    let rest = '';
    const dec = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += dec.decode(value, { stream: true });
    }
    expect(rest).toContain('"type":"agent_completed"');
    expect((await call('GET', `/tasks/${a.json.task_id}/result?wait=30`)).json.status).toBe('completed');
  });
});

test("the thread read as soon as a stream has ended holds that stream's exchange", async () => {
  const first = await call('POST', '/', { body: { message: 'one' } });
  const session = first.json.session;
  for (const message of ['two', 'three', 'four']) {
    const events = await readSse(await postStream(ctx.stack(), { message, streaming: true }, `/?session=${session}`));
    expect(events.at(-1)!.data.type).toBe('agent_completed');
    const read = await call('GET', `/sessions/${session}/messages`);
    expect(read.json.messages.slice(-2)).toEqual([
      { role: 'user', content: message },
      { role: 'assistant', content: `You said: ${message}` },
    ]);
  }
});

test('a thread cleared as soon as a stream has ended stays clear: the exchange does not come back after the clear', async () => {
  const first = await call('POST', '/', { body: { message: 'one' } });
  const session = first.json.session;
  for (const message of ['two', 'three']) {
    const events = await readSse(await postStream(ctx.stack(), { message, streaming: true }, `/?session=${session}`));
    expect(events.at(-1)!.data.type).toBe('agent_completed');
    expect((await call('DELETE', `/sessions/${session}/messages`)).status).toBe(204);
    // Deliberate: long enough for a hand-over that was still on its way to land after the clear (it must not).
    await new Promise((r) => setTimeout(r, 300));
    expect((await call('GET', `/sessions/${session}/messages`)).json.messages).toEqual([]);
  }
});

/** A session with a run in it that is running (waiting on a `seconds` tool call), and that run's task id. */
async function busySession(seconds: number): Promise<{ session: string; running: string }> {
  const first = await call('POST', '/', {
    body: { message: `[[tool name=wait args={"seconds":${seconds}}]] a long job`, background: true },
  });
  const running = first.json.task_id;
  await waitUntil(
    'the first run running',
    async () => (await call('GET', `/tasks/${running}`)).json.status === 'running',
  );
  return { session: first.json.session, running };
}

describe('multitask: steer', () => {
  const steer = (message: string, background = false) => ({ message, multitask: 'steer', background });

  test('JSON: the message goes into the running run, and the answer is that run’s own, taking it in', async () => {
    const { session, running } = await busySession(4);
    const r = await call('POST', `/?session=${session}`, { body: steer('also mention the moon') });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-steered')).toBe('true');
    expect(r.json).toMatchObject({ task_id: running, session, status: 'completed' });
    expect(r.json.events.map((e: { type: string }) => e.type)).toContain('agent_input');
    expect(r.json.output).toContain('also mention the moon');
    // Nothing else started in the session.
    expect((await call('GET', `/tasks?session=${session}`)).json.tasks).toHaveLength(1);
  });

  test('SSE: the running run’s stream, its agent_input and its end; background: 202 naming the running task', async () => {
    const a = await busySession(4);
    const res = await postStream(ctx.stack(), steer('from a stream'), `/?session=${a.session}`);
    expect(res.headers.get('x-task-id')).toBe(a.running);
    expect(res.headers.get('x-steered')).toBe('true');
    const events = await readSse(res);
    const types = events.map((e) => e.data.type);
    expect(types[0]).toBe('agent_started');
    expect(types).toContain('agent_input');
    expect(types.at(-1)).toBe('agent_completed');

    const b = await busySession(4);
    const accepted = await call('POST', `/?session=${b.session}`, { body: steer('in the background', true) });
    expect(accepted.status).toBe(202);
    expect(accepted.json).toMatchObject({ task_id: b.running, session: b.session, status: 'running', steered: true });
    const result = await call('GET', `/tasks/${b.running}/result?wait=30`);
    expect(result.json.output).toContain('in the background');
  });

  test('with no run running, the request runs as with queue; steer takes no callback or schedules', async () => {
    const first = await call('POST', '/', { body: { message: 'hello' } });
    const r = await call('POST', `/?session=${first.json.session}`, { body: steer('a new run then') });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-steered')).toBeNull();
    expect(r.json.task_id).not.toBe(first.json.task_id);
    expect(r.json.output).toBe('You said: a new run then');
    const bad = await call('POST', `/?session=${first.json.session}`, {
      body: { ...steer('x', true), callback: { url: 'https://example.com/hook' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.details[0].path).toBe('body.multitask');
  });
});

describe('multitask: interrupt', () => {
  const interrupt = (message: string, background = false) => ({ message, multitask: 'interrupt', background });

  test('JSON: the running run ends cancelled as interrupted, its exchange kept and marked; the new run answers at once, seeing it', async () => {
    const { session, running } = await busySession(30);
    ctx.stack().model!.reset();
    const r = await call('POST', `/?session=${session}`, { body: interrupt('change of plan') });
    expect(r.status).toBe(200);
    expect(r.json.task_id).not.toBe(running);
    expect(r.json).toMatchObject({ session, status: 'completed', output: 'You said: change of plan' });
    const old = await call('GET', `/tasks/${running}/result`);
    expect(old.json).toMatchObject({ status: 'cancelled', error: { type: 'interrupted' } });
    const thread = (await call('GET', `/sessions/${session}/messages`)).json.messages;
    expect(thread).toEqual([
      { role: 'user', content: '[[tool name=wait args={"seconds":30}]] a long job' },
      { role: 'assistant', content: expect.stringMatching(/^\[interrupted: a new message arrived/) },
      { role: 'user', content: 'change of plan' },
      { role: 'assistant', content: 'You said: change of plan' },
    ]);
    // The new run's model request carried the interrupted exchange.
    const sent = JSON.stringify(ctx.stack().model!.received().at(-1)!.body.messages);
    expect(sent).toContain('a long job');
    expect(sent).toContain('[interrupted');
  });

  test('SSE and background: the new run streams or is accepted; the interrupted run ends with agent_error interrupted', async () => {
    const a = await busySession(30);
    const res = await postStream(ctx.stack(), interrupt('streamed instead'), `/?session=${a.session}`);
    const events = await readSse(res);
    expect(res.headers.get('x-task-id')).not.toBe(a.running);
    expect(events.at(-1)?.data.type).toBe('agent_completed');
    // The interrupted run's own stream ends with its agent_error.
    const old = await fetch(`${ctx.stack().gatewayUrl}/tasks/${a.running}/events`, {
      headers: { authorization: `Bearer ${KEY_A}`, accept: 'text/event-stream' },
    });
    const oldEvents = await readSse(old);
    expect(oldEvents.at(-1)?.data).toMatchObject({ type: 'agent_error', error: { type: 'interrupted' } });
    const b = await busySession(30);
    const accepted = await call('POST', `/?session=${b.session}`, { body: interrupt('later instead', true) });
    expect(accepted.status).toBe(202);
    expect(accepted.json.task_id).not.toBe(b.running);
    const result = await call('GET', `/tasks/${accepted.json.task_id}/result?wait=30`);
    expect(result.json).toMatchObject({ status: 'completed', output: 'You said: later instead' });
    const cancelled = await call('GET', `/tasks/${b.running}/result`);
    expect(cancelled.json).toMatchObject({ status: 'cancelled', error: { type: 'interrupted' } });
  });

  test('with no run running it is a plain run, and a cancel without interrupt keeps nothing of the run', async () => {
    const { session, running } = await busySession(30);
    await call('POST', `/tasks/${running}/cancel`);
    await waitUntil(
      'the cancel done',
      async () => (await call('GET', `/tasks/${running}`)).json.status === 'cancelled',
    );
    const r = await call('POST', `/?session=${session}`, { body: interrupt('nothing to interrupt') });
    expect(r.json).toMatchObject({ status: 'completed', output: 'You said: nothing to interrupt' });
    expect((await call('GET', `/sessions/${session}/messages`)).json.messages).toEqual([
      { role: 'user', content: 'nothing to interrupt' },
      { role: 'assistant', content: 'You said: nothing to interrupt' },
    ]);
  });
});
