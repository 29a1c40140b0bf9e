// The sessions API: create (an id of the client's choosing or a new one, 409 when
// taken, 400 when malformed), list (paged, each session once across idle closes
// and reopens, per account), delete (204, 404, 409 while busy, the id free again), fork (a new
// session with the thread or its first messages; its next run sees only those).
// Sessions here close after 1.5 s idle, so closed sessions are exercised too.
import { randomUUID } from 'node:crypto';
import { Api, KEY_B, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({ SESSION_IDLE_CLOSE_MS: '1500' });
const call: Api = (...args) => ctx.call(...args);

const newId = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

interface Listed {
  session: string;
  created_at: string;
  open: boolean;
}

/** Every session of the account, paging with `limit`; also the cursors handed out. */
async function listAll(limit: number, key?: string): Promise<{ sessions: Listed[]; cursors: string[] }> {
  const sessions: Listed[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<Api>> = await call(
      'GET',
      `/sessions?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    expect(page.status).toBe(200);
    expect(page.json.sessions.length).toBeLessThanOrEqual(limit);
    sessions.push(...page.json.sessions);
    cursor = page.json.next_cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { sessions, cursors };
}

const entries = async (session: string, key?: string) =>
  (await listAll(100, key)).sessions.filter((s) => s.session === session);

/** The runs Temporal keeps of a session's workflow (each idle close and reopen adds one). */
const runsOf = (session: string) =>
  withTemporal(ctx.stack(), async (client) => {
    const out: string[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = 'session:alice:${session}'` }))
      out.push(wf.runId);
    return out;
  });

test("create with an id of the client's choosing: 201, an empty thread, runs work in it; the id taken is 409", async () => {
  const id = newId('mine');
  const created = await call('POST', '/sessions', { body: { session: id } });
  expect(created.status).toBe(201);
  expect(created.json).toEqual({ session: id, created_at: expect.any(String) });
  expect(Date.parse(created.json.created_at)).toBeGreaterThan(Date.now() - 60_000);
  expect((await call('GET', `/sessions/${id}/messages`)).json).toEqual({ session: id, messages: [] });
  const again = await call('POST', '/sessions', { body: { session: id } });
  expect(again.status).toBe(409);
  expect(again.json.error.type).toBe('conflict');
  const run = await call('POST', `/?session=${id}`, { body: { message: 'hello there' } });
  expect(run.status).toBe(200);
  expect(run.json).toMatchObject({ session: id, status: 'completed' });
  expect((await call('GET', `/sessions/${id}/messages`)).json.messages).toHaveLength(2);
  // Closed when idle, the session still holds its id.
  await waitUntil('the idle session listed closed', async () => (await entries(id)).some((s) => !s.open), {
    stepMs: 200,
  });
  expect((await call('POST', '/sessions', { body: { session: id } })).status).toBe(409);
});

test('create without an id gives a new sess_ id; an empty body is fine', async () => {
  const a = await call('POST', '/sessions', { body: {} });
  const b = await call('POST', '/sessions');
  for (const r of [a, b]) {
    expect(r.status).toBe(201);
    expect(r.json.session).toMatch(/^sess_[0-9a-f]{32}$/);
  }
  expect(a.json.session).not.toBe(b.json.session);
  expect((await call('GET', `/sessions/${b.json.session}/messages`)).json.messages).toEqual([]);
});

test.each([
  ['a malformed id', { session: 'has spaces!' }, 'body.session'],
  ['an id too long', { session: 'x'.repeat(129) }, 'body.session'],
  ['an unknown field', { session: 'fine', colour: 'red' }, 'body.colour'],
])('create with %s is 400 naming it', async (_name, body, path) => {
  const r = await call('POST', '/sessions', { body });
  expect(r.status).toBe(400);
  expect(r.json.error.type).toBe('invalid_request');
  expect(r.json.error.message).toMatch(new RegExp(`^${path.replace(/\./g, '\\.')}: `));
  expect(r.json.error.details[0].path).toBe(path);
});

test("the list pages through every session once, with created_at and open, and only the caller's", async () => {
  const mine = [newId('list'), newId('list'), newId('list')];
  for (const id of mine) expect((await call('POST', '/sessions', { body: { session: id } })).status).toBe(201);
  const theirs = newId('bobs');
  expect((await call('POST', '/sessions', { body: { session: theirs }, key: KEY_B })).status).toBe(201);

  const { sessions, cursors } = await listAll(2);
  const ids = sessions.map((s) => s.session);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(expect.arrayContaining(mine));
  expect(ids).not.toContain(theirs);
  for (const c of cursors) expect(c).toMatch(/^[A-Za-z0-9_-]{1,200}$/);
  for (const s of sessions) {
    expect(typeof s.open).toBe('boolean');
    expect(Number.isNaN(Date.parse(s.created_at))).toBe(false);
  }
  expect((await entries(theirs, KEY_B)).map((s) => s.session)).toEqual([theirs]);

  expect((await call('GET', '/sessions?limit=0')).status).toBe(400);
  const bad = await call('GET', '/sessions?cursor=not-a-cursor');
  expect(bad.status).toBe(422);
  expect(bad.json.error.details[0].path).toBe('query.cursor');
});

test('a session closed when idle and reopened by its next run is listed once, keeping its created_at', async () => {
  const id = newId('reopen');
  const created = (await call('POST', '/sessions', { body: { session: id } })).json;
  expect((await call('POST', `/?session=${id}`, { body: { message: 'first' } })).status).toBe(200);
  await waitUntil('the idle session listed closed', async () => (await entries(id)).some((s) => !s.open), {
    stepMs: 200,
  });
  expect((await call('POST', `/?session=${id}`, { body: { message: 'second' } })).status).toBe(200);
  await waitUntil("the session's two runs", async () => (await runsOf(id)).length >= 2, { stepMs: 200 });
  for (const when of ['reopened', 'closed again']) {
    const listed = await entries(id);
    expect([when, listed.length]).toEqual([when, 1]);
    expect(listed[0].created_at).toBe(created.created_at);
    if (when === 'reopened')
      await waitUntil(
        'the reopened session listed closed again',
        async () => (await entries(id)).some((s) => !s.open),
        { stepMs: 200 },
      );
  }
  expect((await call('GET', `/sessions/${id}/messages`)).json.messages).toHaveLength(4);
});

test.each(['open', 'closed'])(
  'delete of a session that is %s: 204, then the thread is gone, the session unlisted, and the id can be created again',
  async (state) => {
    const id = newId(`del-${state}`);
    await call('POST', '/sessions', { body: { session: id } });
    expect((await call('POST', `/?session=${id}`, { body: { message: 'remember me' } })).status).toBe(200);
    await waitUntil('the idle session listed closed', async () => (await entries(id)).some((s) => !s.open), {
      stepMs: 200,
    });
    expect((await call('POST', `/?session=${id}`, { body: { message: 'and me' } })).status).toBe(200); // a second run
    if (state === 'closed')
      await waitUntil(
        'the session listed closed after its second run',
        async () => (await entries(id)).some((s) => !s.open),
        { stepMs: 200 },
      );

    const del = await call('DELETE', `/sessions/${id}`);
    expect(del.status).toBe(204);
    expect((await call('GET', `/sessions/${id}/messages`)).status).toBe(404);
    expect((await call('POST', `/?session=${id}`, { body: { message: 'anyone?' } })).status).toBe(404);
    expect(await entries(id)).toEqual([]);
    expect((await call('DELETE', `/sessions/${id}`)).status).toBe(404);

    const again = await call('POST', '/sessions', { body: { session: id } });
    expect(again.status).toBe(201);
    expect((await call('GET', `/sessions/${id}/messages`)).json.messages).toEqual([]);
    expect(await entries(id)).toEqual([{ session: id, created_at: again.json.created_at, open: true }]);
    expect((await call('DELETE', `/sessions/${id}`)).status).toBe(204);
    // Every run, not only the last (a real Temporal removes closed runs about 30 s after the call).
    await waitUntil('every run of the deleted session removed', async () => (await runsOf(id)).length === 0, {
      timeoutMs: 60_000,
      stepMs: 500,
    });
  },
);

test("delete is 404 for an unknown session and for another account's, whose session stays", async () => {
  expect((await call('DELETE', `/sessions/${newId('never')}`)).status).toBe(404);
  expect((await call('DELETE', '/sessions/bad%20id')).status).toBe(400);
  const id = newId('alices');
  await call('POST', '/sessions', { body: { session: id } });
  const foreign = await call('DELETE', `/sessions/${id}`, { key: KEY_B });
  expect(foreign.status).toBe(404);
  expect(foreign.json.error.type).toBe('not_found');
  expect((await call('GET', `/sessions/${id}/messages`)).status).toBe(200);
});

test('delete is 409 while a run is active or queued in the session, and works once it is done', async () => {
  const first = await call('POST', '/', { body: { message: '[[slow delay=100 tokens=20]] busy', background: true } });
  const id = first.json.session;
  await waitUntil(
    'the first run running',
    async () => (await call('GET', `/tasks/${first.json.task_id}`)).json.status === 'running',
  );
  const queued = await call('POST', `/?session=${id}`, { body: { message: 'after you', background: true } });
  const busy = await call('DELETE', `/sessions/${id}`);
  expect(busy.status).toBe(409);
  expect(busy.json.error.type).toBe('conflict');
  expect(busy.json.error.message).toMatch(/active or queued/);
  expect(busy.json.error.details).toMatchObject({
    session: id,
    active: first.json.task_id,
    queued: [queued.json.task_id],
  });
  expect((await call('GET', `/tasks/${queued.json.task_id}/result?wait=30`)).json.status).toBe('completed');
  await waitUntil(
    "the session's delete to succeed once its runs are done",
    async () => (await call('DELETE', `/sessions/${id}`)).status === 204,
    { stepMs: 200 },
  );
  expect((await call('GET', `/sessions/${id}/messages`)).status).toBe(404);
});

describe('fork', () => {
  /** A session of two exchanges (four messages), closed when idle or not. */
  async function twoExchanges(prefix: string): Promise<string> {
    const id = newId(prefix);
    expect((await call('POST', '/sessions', { body: { session: id } })).status).toBe(201);
    for (const message of ['[[say text="Noted: the tide is at six."]] first fact', 'second fact: the moon is full'])
      expect((await call('POST', `/?session=${id}`, { body: { message } })).json.status).toBe('completed');
    return id;
  }

  test('a fork at 2 keeps the first exchange; its next run sees only that; the session forked from is unchanged', async () => {
    const from = await twoExchanges('fork-src');
    const all = (await call('GET', `/sessions/${from}/messages`)).json.messages;
    expect(all).toHaveLength(4);
    const to = newId('fork-dst');
    const forked = await call('POST', `/sessions/${from}/fork`, { body: { at: 2, session: to } });
    expect(forked.status).toBe(201);
    expect(forked.json).toEqual({ session: to, created_at: expect.any(String), forked_from: from, messages: 2 });
    expect((await call('GET', `/sessions/${to}/messages`)).json.messages).toEqual(all.slice(0, 2));
    const run = await call('POST', `/?session=${to}`, { body: { message: 'what do you know?' } });
    expect(run.json.status).toBe('completed');
    const sent = ctx
      .stack()
      .model!.received()
      .map((r) => JSON.stringify(r.body.messages))
      .filter((m) => m.includes('what do you know?'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('Noted: the tide is at six.');
    expect(sent[0]).not.toContain('the moon is full');
    expect((await call('GET', `/sessions/${from}/messages`)).json.messages).toEqual(all);
    expect((await call('GET', `/sessions/${to}/messages`)).json.messages).toHaveLength(4);
  });

  test('a closed session forks whole by default, to a new sess_ id', async () => {
    const from = await twoExchanges('fork-closed');
    await waitUntil('the session closed when idle', async () => (await entries(from)).some((s) => !s.open), {
      stepMs: 200,
    });
    const forked = await call('POST', `/sessions/${from}/fork`);
    expect(forked.status).toBe(201);
    expect(forked.json).toMatchObject({ session: expect.stringMatching(/^sess_[0-9a-f]{32}$/), messages: 4 });
    expect((await call('GET', `/sessions/${forked.json.session}/messages`)).json.messages).toHaveLength(4);
  });

  test('at beyond the thread is 422 naming body.at; unknown and other accounts\u2019 sessions 404; a taken id 409', async () => {
    const from = await twoExchanges('fork-bad');
    const beyond = await call('POST', `/sessions/${from}/fork`, { body: { at: 5 } });
    expect(beyond.status).toBe(422);
    expect(beyond.json.error.details[0]).toMatchObject({ path: 'body.at' });
    expect(beyond.json.error.message).toMatch(/has 4 messages/);
    expect((await call('POST', `/sessions/${from}/fork`, { body: { at: -1 } })).status).toBe(400);
    expect((await call('POST', `/sessions/${newId('nope')}/fork`)).status).toBe(404);
    expect((await call('POST', `/sessions/${from}/fork`, { key: KEY_B })).status).toBe(404);
    expect((await call('POST', `/sessions/${from}/fork`, { body: { session: from } })).status).toBe(409);
  });
});
