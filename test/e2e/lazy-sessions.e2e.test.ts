// A run that names no session gets a session that no workflow stands for until
// something uses it (src/common/sessions/lazy-sessions.ts): its id is made from
// the task's, the run holds its turn and hands nothing over, and everything the
// sessions API does works on it as on any other. Seen here through the real
// gateway and worker: the session has no workflow in Temporal, is listed once
// (before and after it opens), its thread is read from its first run, a later
// run continues it (while the first is still going, and after), multitask
// "reject" sees the first run, files go in it, its thread can be cleared, and
// a delete is refused while the first run goes and is final after it.
import { Api, KEY_B, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({});
const call: Api = (...args) => ctx.call(...args);

const listed = async (session: string) => {
  const page = await call('GET', '/sessions?limit=100');
  return (page.json.sessions as { session: string; open: boolean }[]).filter((s) => s.session === session);
};
const thread = async (session: string) =>
  ((await call('GET', `/sessions/${session}/messages`)).json.messages as { role: string; content: string }[]).map(
    (m) => `${m.role}:${m.content}`,
  );
const workflowOf = (session: string) => `session:alice:${session}`;

test('no session workflow for a run that names none; listed once, its thread read from the run, continued by a later run', async () => {
  const first = await call('POST', '/', { body: { message: 'my name is Ada' } });
  expect(first.json.status).toBe('completed');
  const session = first.json.session as string;
  expect(session).toBe(String(first.json.task_id).replace(/^task_/, 'sess_'));
  await withTemporal(ctx.stack(), async (client) => {
    await expect(client.workflow.getHandle(workflowOf(session)).describe()).rejects.toThrow(/not found/i);
  });
  await waitUntil('the session listed', async () => (await listed(session)).length === 1);
  expect(await listed(session)).toEqual([expect.objectContaining({ session, open: false })]);
  expect(await thread(session)).toEqual(['user:my name is Ada', 'assistant:You said: my name is Ada']);

  ctx.stack().model!.reset();
  const next = await call('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
  expect(next.json).toMatchObject({ session, status: 'completed' });
  const sent = ctx.stack().model!.received().at(-1)!.body as { messages: { role: string; content: string }[] };
  expect(sent.messages.map((m) => `${m.role}:${m.content}`)).toEqual(
    expect.arrayContaining(['user:my name is Ada', 'assistant:You said: my name is Ada', 'user:what is my name?']),
  );
  expect(await thread(session)).toHaveLength(4);
  // Opened now: listed once still, by its own workflow.
  await withTemporal(ctx.stack(), async (client) => {
    expect((await client.workflow.getHandle(workflowOf(session)).describe()).type).toBe('agentSession');
  });
  expect(await listed(session)).toHaveLength(1);
});

test('while its first run goes: reject is refused, a queued run waits behind it and sees its exchange', async () => {
  const first = await call('POST', '/', {
    body: { message: '[[slow delay=50 tokens=40]] first words', background: true },
  });
  const session = first.json.session as string;
  await waitUntil(
    'the first run running',
    async () => (await call('GET', `/tasks/${first.json.task_id}`)).json.status === 'running',
  );
  const refused = await call('POST', `/?session=${session}`, { body: { message: 'no wait', multitask: 'reject' } });
  expect(refused.status).toBe(409);
  const queued = await call('POST', `/?session=${session}`, { body: { message: 'after you', background: true } });
  expect(queued.status).toBe(202);
  expect((await call('GET', `/tasks/${queued.json.task_id}`)).json.status).toBe('queued');
  const second = await call('GET', `/tasks/${queued.json.task_id}/result?wait=60`);
  expect(second.json.status).toBe('completed');
  expect((await call('GET', `/tasks/${first.json.task_id}`)).json.status).toBe('completed');
  const t = await thread(session);
  expect(t[0]).toBe('user:[[slow delay=50 tokens=40]] first words');
  expect(t.slice(2)).toEqual(['user:after you', 'assistant:You said: after you']);
  // Refused before anything started: the session's tasks are the two that ran.
  expect((await call('GET', `/tasks?session=${session}`)).json.tasks).toHaveLength(2);
});

test('files go in it, and its thread can be cleared', async () => {
  const first = await call('POST', '/', { body: { message: 'keep this' } });
  const session = first.json.session as string;
  const put = await call('PUT', `/sessions/${session}/files/notes.txt`, {
    raw: 'hello',
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(put.status).toBeLessThan(300);
  const files = await call('GET', `/sessions/${session}/files`);
  expect(JSON.stringify(files.json)).toContain('notes.txt');
  expect((await call('DELETE', `/sessions/${session}/messages`)).status).toBe(204);
  await waitUntil('the cleared thread', async () => (await thread(session)).length === 0);
});

test('a delete is refused while its first run goes; after it, the session is gone everywhere for good', async () => {
  const first = await call('POST', '/', { body: { message: '[[slow delay=50 tokens=40]] going', background: true } });
  const session = first.json.session as string;
  await waitUntil(
    'the first run running',
    async () => (await call('GET', `/tasks/${first.json.task_id}`)).json.status === 'running',
  );
  const busy = await call('DELETE', `/sessions/${session}`);
  expect(busy.status).toBe(409);
  expect(busy.json.error.details).toMatchObject({ session, active: first.json.task_id });
  await call('GET', `/tasks/${first.json.task_id}/result?wait=60`);
  expect((await call('DELETE', `/sessions/${session}`)).status).toBe(204);
  expect((await call('GET', `/sessions/${session}/messages`)).status).toBe(404);
  expect((await call('POST', `/?session=${session}`, { body: { message: 'hello?' } })).status).toBe(404);
  expect(await listed(session)).toEqual([]);
  const again = await call('POST', '/sessions', { body: { session } });
  expect(again.status).toBe(409);
  // The task itself stays.
  expect((await call('GET', `/tasks/${first.json.task_id}`)).json.status).toBe('completed');
});

test("another account's key finds none of it", async () => {
  const first = await call('POST', '/', { body: { message: 'mine' } });
  const session = first.json.session as string;
  expect((await call('GET', `/sessions/${session}/messages`, { key: KEY_B })).status).toBe(404);
  expect((await call('POST', `/?session=${session}`, { body: { message: 'hi' }, key: KEY_B })).status).toBe(404);
  expect((await call('DELETE', `/sessions/${session}`, { key: KEY_B })).status).toBe(404);
});
