// The session the service makes for a run that names none is never open while unused: an
// unkeyed run's opens no workflow at all (lazy-sessions.e2e.test.ts says more), a keyed one's
// closes once idle for ONE_OFF_SESSION_IDLE_CLOSE_MS (here 1 s), not SESSION_IDLE_CLOSE_MS (here
// 10 min): most are never continued, and an open one holds a workflow in the engine and the
// worker's cache (the cost phase of the bench). Its thread stays readable, a later run of it
// opens it with its thread, and from then on it is a session like any other. A session made with
// POST /sessions keeps SESSION_IDLE_CLOSE_MS.
import { randomUUID } from 'node:crypto';
import { Api, sleep, useStack, waitUntil } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({ SESSION_IDLE_CLOSE_MS: '600000', ONE_OFF_SESSION_IDLE_CLOSE_MS: '1000' });
const call: Api = (...args) => ctx.call(...args);

const openOf = async (session: string): Promise<boolean | undefined> => {
  const page = await call('GET', '/sessions?limit=100');
  return (page.json.sessions as { session: string; open: boolean }[]).find((s) => s.session === session)?.open;
};

test("a run's own session is not open after it, keeps its thread, and a later run opens it for good", async () => {
  const first = await call('POST', '/', { body: { message: '[[say text="Hello, Ada."]] my name is Ada' } });
  expect(first.json.status).toBe('completed');
  const session = first.json.session as string;
  await waitUntil(
    'the one-off session listed, not open',
    () => openOf(session),
    (open) => open === false,
    { stepMs: 200 },
  );
  expect((await call('GET', `/sessions/${session}/messages`)).json.messages).toHaveLength(2);
  const next = await call('POST', `/?session=${session}`, { body: { message: 'what is my name?' } });
  expect(next.json).toMatchObject({ session, status: 'completed' });
  expect((await call('GET', `/sessions/${session}/messages`)).json.messages).toHaveLength(4);
  // Reopened by a run that named it: SESSION_IDLE_CLOSE_MS from now on, so still open well past 1 s.
  await sleep(3000);
  expect(await openOf(session)).toBe(true);
});

test('so does the session of a keyed request that named none', async () => {
  const key = `one-off-${randomUUID()}`;
  const r = await call('POST', '/', { body: { message: 'hello' }, headers: { 'Idempotency-Key': key } });
  expect(r.json.status).toBe('completed');
  await waitUntil(
    'the keyed one-off session closed',
    () => openOf(r.json.session),
    (open) => open === false,
    {
      stepMs: 200,
    },
  );
});

test('a session made with POST /sessions keeps SESSION_IDLE_CLOSE_MS', async () => {
  const session = `named-${randomUUID().slice(0, 8)}`;
  expect((await call('POST', '/sessions', { body: { session } })).status).toBe(201);
  expect((await call('POST', `/?session=${session}`, { body: { message: 'hi' } })).json.status).toBe('completed');
  await sleep(3000);
  expect(await openOf(session)).toBe(true);
});
