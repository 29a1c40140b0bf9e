// The tasks API over HTTP: status, result (409 before, long poll), listing with
// filters and cursor paging, cancellation mid-token, metadata, the events
// stream with Last-Event-ID resume (through a real SSE client library), and
// account isolation.
import EventSource from 'eventsource';
import { Api, KEY_A, KEY_B, readSse, useStack, waitUntil } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack();
const call: Api = (...args) => ctx.call(...args);

async function background(message: string, extra: object = {}, key = KEY_A): Promise<string> {
  const r = await call('POST', '/', { body: { message, background: true, ...extra }, key });
  expect(r.status).toBe(202);
  return r.json.task_id;
}

test('status moves queued/running -> completed; the result is 409 before and complete after', async () => {
  const id = await background('[[slow delay=100 tokens=15]] a slow one');
  const early = await call('GET', `/tasks/${id}`);
  expect(early.status).toBe(200);
  expect(['queued', 'running']).toContain(early.json.status);
  expect(early.json).toMatchObject({ task_id: id, error: null, completed_at: null });
  expect(early.json).not.toHaveProperty('account');
  const notYet = await call('GET', `/tasks/${id}/result`);
  expect(notYet.status).toBe(409);
  expect(notYet.json.error.type).toBe('conflict');
  const waited = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(waited.status).toBe(200);
  expect(waited.json).toMatchObject({ task_id: id, status: 'completed' });
  expect(waited.json.output.length).toBeGreaterThan(10);
  const after = await call('GET', `/tasks/${id}`);
  expect(after.json).toMatchObject({ status: 'completed', progress: 1 });
  expect(after.json.started_at).not.toBeNull();
  expect(after.json.completed_at).not.toBeNull();
});

test('listing: newest first, filters by status and session, cursor paging without overlap', async () => {
  const first = await call('POST', '/', { body: { message: 'list me 1' } });
  const session = first.json.session;
  for (let i = 2; i <= 4; i++) await call('POST', `/?session=${session}`, { body: { message: `list me ${i}` } });
  const all: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<Api>> = await call(
      'GET',
      `/tasks?session=${session}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(page.status).toBe(200);
    expect(page.json.tasks.length).toBeLessThanOrEqual(2);
    all.push(...page.json.tasks.map((t: { task_id: string }) => t.task_id));
    cursor = page.json.next_cursor;
  } while (cursor);
  expect(all).toHaveLength(4);
  expect(new Set(all).size).toBe(4);
  expect(all[3]).toBe(first.json.task_id); // newest first: the first run comes last
  const completed = await call('GET', `/tasks?session=${session}&status=completed`);
  expect(completed.json.tasks).toHaveLength(4);
  const running = await call('GET', `/tasks?session=${session}&status=running`);
  expect(running.json.tasks).toHaveLength(0);
  const bad = await call('GET', '/tasks?status=sleeping');
  expect(bad.status).toBe(400);
});

test('paging limit=2 over 5 tasks gives each task once, newest first, with short opaque cursors; timestamps keep milliseconds', async () => {
  const first = await call('POST', '/', { body: { message: 'page me 1' } });
  const session = first.json.session;
  const ids = [first.json.task_id];
  for (let i = 2; i <= 5; i++)
    ids.push((await call('POST', `/?session=${session}`, { body: { message: `page me ${i}` } })).json.task_id);
  const seen: { task_id: string; created_at: string; completed_at: string }[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<Api>> = await call(
      'GET',
      `/tasks?session=${session}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(page.status).toBe(200);
    seen.push(...page.json.tasks);
    cursor = page.json.next_cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  // Each ran after the one before, so newest first is also most recently closed first (the order of a real Temporal's SQL store).
  expect(seen.map((t) => t.task_id)).toEqual([...ids].reverse());
  expect(cursors.length).toBeGreaterThanOrEqual(2);
  for (const c of cursors) expect(c).toMatch(/^[A-Za-z0-9_-]{1,199}$/);
  for (const t of seen) {
    expect(t.completed_at).toMatch(/\.\d{3}Z$/);
    expect(Date.parse(t.completed_at)).toBeGreaterThanOrEqual(Date.parse(t.created_at));
  }
  // A run takes milliseconds here: whole seconds would have put most closes at .000.
  expect(seen.some((t) => !t.completed_at.endsWith('.000Z'))).toBe(true);

  // Of the cursor's shape (the document states it) but not handed out for this listing: a 422; of another shape: a 400.
  for (const [bad, status, type] of [
    ['not-a-cursor', 422, 'unprocessable_request'],
    ['AQ', 422, 'unprocessable_request'],
    [cursors[0].slice(0, -3), 422, 'unprocessable_request'],
    ['x'.repeat(50), 422, 'unprocessable_request'],
    ['not a cursor!', 400, 'invalid_request'],
  ] as const) {
    const r = await call('GET', `/tasks?limit=2&cursor=${encodeURIComponent(bad)}`);
    expect([bad, r.status]).toEqual([bad, status]);
    expect(r.json.error.type).toBe(type);
    expect(r.json.error.details[0].path).toBe('query.cursor');
  }
});

test('cancel mid-token: the task ends cancelled, not after its model turn; repeat-safe; 409 once finished', async () => {
  // The answer would take 10 minutes (4000 tokens, 150 ms apart): a cancel that waited for the
  // model turn to end would not be seen within the wait below, nor within the test's timeout.
  const id = await background('[[slow delay=150 tokens=4000]] never finishes in time', { streaming: true });
  const stream = await fetch(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  await waitUntil(
    "the first token on the task's stream",
    () => readSse(stream, (e) => e.data.type === 'agent_response'),
    (evs) => evs.at(-1)?.data.type === 'agent_response',
  );
  const c1 = await call('POST', `/tasks/${id}/cancel`);
  expect(c1.status).toBe(202);
  const c2 = await call('POST', `/tasks/${id}/cancel`);
  expect([202, 409]).toContain(c2.status); // repeat-safe: accepted again, or already finished
  await waitUntil(
    'the task to be cancelled',
    async () => (await call('GET', `/tasks/${id}`)).json.status === 'cancelled',
  );
  const again = await call('POST', `/tasks/${id}/cancel`);
  expect(again.status).toBe(409);
  const result = await call('GET', `/tasks/${id}/result`);
  expect(result.json).toMatchObject({ status: 'cancelled', error: { type: 'cancelled' } });
});

test('PATCH merges metadata into a running task; the finished task keeps it', async () => {
  const id = await background('[[slow delay=100 tokens=15]] patch me', { metadata: { a: 1 } });
  const r = await call('PATCH', `/tasks/${id}`, { body: { metadata: { b: 2 } } });
  expect(r.status).toBe(200);
  expect(r.json.metadata).toEqual({ a: 1, b: 2 });
  await waitUntil("the patched metadata in the task's status", async () => {
    const s = await call('GET', `/tasks/${id}`);
    return s.json.metadata.b === 2;
  });
  // The model turn that ends the run writes the completed status; the patch it never saw stays.
  expect((await call('GET', `/tasks/${id}/result?wait=30`)).json.status).toBe('completed');
  expect((await call('GET', `/tasks/${id}`)).json).toMatchObject({ status: 'completed', metadata: { a: 1, b: 2 } });
});

test('events: a late client gets every event from the first; Last-Event-ID resumes exactly after', async () => {
  const id = await background('one two three four five six seven', { streaming: true });
  await call('GET', `/tasks/${id}/result?wait=30`);
  const read = (headers: Record<string, string>) =>
    new Promise<{ id: string; data: any }[]>((resolve, reject) => {
      const got: { id: string; data: any }[] = [];
      const es = new EventSource(`${ctx.stack().gatewayUrl}/tasks/${id}/events`, {
        headers: { Authorization: `Bearer ${KEY_A}`, ...headers },
      });
      es.onmessage = (m) => {
        const data = JSON.parse(m.data);
        got.push({ id: m.lastEventId, data });
        if (data.type === 'agent_completed' || data.type === 'agent_error') {
          es.close();
          resolve(got);
        }
      };
      es.onerror = (e) => {
        es.close();
        reject(new Error(`sse error ${JSON.stringify(e)}`));
      };
    });
  const all = await read({});
  expect(all.map((e) => e.data.seq)).toEqual(all.map((_, i) => i + 1));
  expect(all[0].data.type).toBe('agent_started');
  const resumed = await read({ 'Last-Event-ID': '4' });
  expect(resumed.map((e) => e.data.seq)).toEqual(all.slice(4).map((e) => e.data.seq));
  const viaQuery = await call('GET', `/tasks/${id}/events?after=${all.length - 1}`, {
    headers: { accept: 'text/event-stream' },
  });
  expect(viaQuery.text).toContain(`id: ${all.length}`);
  expect(viaQuery.text).not.toContain(`id: ${all.length - 1}\n`);
});

test("another account's key gets 404, never the data", async () => {
  const id = await background('private to alice');
  for (const [method, path] of [
    ['GET', `/tasks/${id}`],
    ['GET', `/tasks/${id}/result`],
    ['POST', `/tasks/${id}/cancel`],
    ['GET', `/tasks/${id}/events`],
  ]) {
    const r = await call(method, path, { key: KEY_B });
    expect(r.status).toBe(404);
    expect(r.text).not.toContain('private to alice');
  }
  const list = await call('GET', '/tasks', { key: KEY_B });
  expect(list.json.tasks.map((t: { task_id: string }) => t.task_id)).not.toContain(id);
});
