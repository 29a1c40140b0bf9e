// Bad input gets a clear JSON error {error: {type, message, details}} that says
// what is wrong and where; nothing crashes; idempotent submission.
import { Api, useStack, waitUntil } from './helpers';
import { TS_LOADER_ARGS } from '../../src/common/ts-loader';

jest.setTimeout(120_000);
const ctx = useStack({ BODY_LIMIT_BYTES: String(64 * 1024) });
const call: Api = (...args) => ctx.call(...args);

const shape = (r: { json: any }) => {
  expect(Object.keys(r.json)).toEqual(['error']);
  expect(Object.keys(r.json.error).sort()).toEqual(['details', 'message', 'type']);
  expect(typeof r.json.error.type).toBe('string');
  expect(r.json.error.message.length).toBeGreaterThan(5);
};

test('authentication: missing or wrong key is 401 with WWW-Authenticate', async () => {
  const none = await call('POST', '/', { body: { message: 'x' }, key: null });
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
  expect(none.json.error.type).toBe('unauthorized');
  const wrong = await call('GET', '/tasks', { key: 'not-a-key' });
  expect(wrong.status).toBe(401);
  expect((await call('GET', '/healthz', { key: null })).status).toBe(200);
});

test.each([
  ['malformed JSON', { raw: '{"message": ', headers: { 'content-type': 'application/json' } }, 400, /malformed JSON/],
  ['missing message', { body: {} }, 400, /message/],
  ['empty message', { body: { message: '   ' } }, 400, /message/],
  ['wrong type', { body: { message: 'x', background: 'yes' } }, 400, /background/],
  ['bad mode', { body: { message: 'x', mode: 'turbo' } }, 400, /mode/],
  [
    'unknown fields named',
    { body: { message: 'x', colour: 'red', size: 2 } },
    400,
    /^body\.colour: unknown field; body\.size: unknown field$/,
  ],
  [
    'unknown nested field',
    { body: { message: 'x', mcp_servers: [{ serverName: 'a', serverUrl: 'http://x.test/sse', extra: 1 }] } },
    400,
    /^body\.mcp_servers\[0\]\.extra: unknown field/,
  ],
  [
    'bad URL in a nested field',
    { body: { message: 'x', callback: { url: 'not a url' } } },
    400,
    /^body\.callback\.url: /,
  ],
  ['max_duration not a whole positive number', { body: { message: 'x', max_duration: 0.5 } }, 400, /max_duration/],
  ['a JSON array body', { raw: '[1,2]', headers: { 'content-type': 'application/json' } }, 400, /body/],
  [
    'wrong content type',
    { raw: 'message=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    415,
    /application\/json/,
  ],
])('%s', async (_name, opts, status, message) => {
  const r = await call('POST', '/', opts as never);
  expect(r.status).toBe(status);
  shape(r);
  expect(r.json.error.message).toMatch(message);
});

test('every 400 names its places one way (body.x[0].y, query.x, path.id, header.X), its message opening with the first problem', async () => {
  const paths = (r: { json: any }) => r.json.error.details.map((d: { path: string }) => d.path);
  // An unknown field does not hide the other problems, and does not take the headline from the first one.
  const mixed = await call('POST', '/', {
    body: { message: 'x', mode: 'turbo', colour: 'red', agents: [{ name: 'a', description: 'b', extra: 1 }] },
  });
  expect(mixed.status).toBe(400);
  expect(paths(mixed)).toEqual(['body.mode', 'body.agents[0].extra', 'body.colour']);
  expect(mixed.json.error.message).toMatch(
    /^body\.mode: .*flash.*; body\.agents\[0\]\.extra: unknown field; body\.colour: unknown field$/,
  );
  const query = await call('GET', '/tasks?limit=0&bogus=1');
  expect(paths(query)).toEqual(['query.limit', 'query.bogus']);
  expect(query.json.error.message).toMatch(/^query\.limit: /);
  const id = await call('GET', '/tasks/not%20an%20id');
  expect(id.json.error).toMatchObject({
    message: expect.stringMatching(/^path\.id: malformed task id "not an id"/),
    details: [{ path: 'path.id', code: 'invalid_format' }],
  });
  const header = await call('POST', '/', { body: { message: 'x' }, headers: { 'idempotency-key': 'has space' } });
  expect(header.json.error.details).toEqual([
    expect.objectContaining({ path: 'header.Idempotency-Key', code: 'invalid_format' }),
  ]);
  const json = await call('POST', '/', { raw: '{"message": ', headers: { 'content-type': 'application/json' } });
  expect(json.json.error).toMatchObject({
    message: expect.stringMatching(/^body: malformed JSON/),
    details: [{ path: 'body', code: 'malformed_json' }],
  });
});

test('x-should-retry: false on the 409s only another request can fix, true on one that passes by itself', async () => {
  const retry = (r: { status: number; headers: Headers }) => [r.status, r.headers.get('x-should-retry')];
  const long = await call('POST', '/', {
    body: { message: '[[tool name=wait args={"seconds":600}]] a long wait', background: true },
  });
  expect(retry(await call('GET', `/tasks/${long.json.task_id}/result`))).toEqual([409, 'true']);
  const busy = await call('POST', `/?session=${long.json.session}`, {
    body: { message: 'me too', multitask: 'reject' },
  });
  expect(retry(busy)).toEqual([409, 'false']);
  expect((await call('POST', `/tasks/${long.json.task_id}/cancel`)).status).toBe(202);
  expect((await call('GET', `/tasks/${long.json.task_id}/result?wait=30`)).json.status).toBe('cancelled');
  expect(retry(await call('POST', `/tasks/${long.json.task_id}/cancel`))).toEqual([409, 'false']);
  const taken = `taken-${Date.now()}`;
  expect((await call('POST', '/sessions', { body: { session: taken } })).status).toBe(201);
  expect(retry(await call('POST', '/sessions', { body: { session: taken } }))).toEqual([409, 'false']);
  expect(retry(await call('POST', '/', { body: { message: 'x', colour: 'red' } }))).toEqual([400, 'false']);
  expect(retry(await call('POST', '/', { body: { message: 'x', max_steps: 100_000 } }))).toEqual([422, 'false']);
});

test('an oversized body is 413 naming the limit', async () => {
  const r = await call('POST', '/', { body: { message: 'x'.repeat(100 * 1024) } });
  expect(r.status).toBe(413);
  shape(r);
  expect(r.json.error.message).toMatch(/65536/);
});

test('workflows are checked as graphs before anything starts: each problem a 422 naming its path (the document states shapes, not graphs); a sound one is accepted', async () => {
  const step = (id: string, depends_on: string[] = [], extra: object = {}) => ({
    id,
    name: id,
    description: `do ${id}`,
    depends_on,
    ...extra,
  });
  const post = (steps: object[]) =>
    call('POST', '/', { body: { message: 'x', workflows: [{ id: 'w', name: 'w', description: 'w', steps }] } });
  const cycle = await post([step('a', ['b']), step('b', ['a']), step('c', ['missing'])]);
  expect(cycle.status).toBe(422);
  expect(cycle.json.error.type).toBe('unprocessable_request');
  shape(cycle);
  expect(cycle.json.error.details.map((d: { path: string; code: string }) => [d.path, d.code])).toEqual([
    ['body.workflows[0].steps[2].depends_on[0]', 'unknown_step'],
    ['body.workflows[0].steps', 'cycle'],
  ]);
  expect(cycle.json.error.message).toContain('a -> b -> a');
  // What the schema states about a step (its retry_policy's fields) is a 400.
  for (const retry_policy of [{ backoff: 'linear' }, { max_attempts: 0 }, { attempts: 3 }]) {
    const r = await post([step('a', [], { retry_policy })]);
    expect([JSON.stringify(retry_policy), r.status]).toEqual([JSON.stringify(retry_policy), 400]);
    expect(r.json.error.details[0].path).toMatch(/^body\.workflows\[0\]\.steps\[0\]\.retry_policy/);
  }
  expect((await post([])).status).toBe(400);
  const sound = await call('POST', '/', {
    body: {
      message: 'x',
      background: true,
      workflows: [
        {
          id: 'w',
          name: 'w',
          description: 'w',
          steps: [
            step('a'),
            step('b', ['a'], {
              retry_policy: { max_attempts: 3, backoff: 'fixed', initial_interval: 1 },
              output_schema: { type: 'object' },
            }),
          ],
        },
      ],
    },
  });
  expect(sound.status).toBe(202);
});

test('unknown tasks and routes are 404; malformed ids are 400', async () => {
  expect((await call('GET', '/tasks/task_doesnotexist')).status).toBe(404);
  expect((await call('GET', '/tasks/../../etc')).status).toBe(404);
  expect((await call('GET', '/tasks/not%20an%20id')).status).toBe(400);
  const r = await call('GET', '/nowhere');
  expect(r.status).toBe(404);
  shape(r);
  expect((await call('POST', '/tasks/task_x/nowhere')).status).toBe(404);
});

test.each([
  ['GET', '/', 'POST'],
  ['PUT', '/tasks/task_x', 'GET, PATCH'],
  ['DELETE', '/tasks', 'GET'],
  ['GET', '/tasks/task_x/cancel', 'POST'],
  ['PATCH', '/sessions', 'GET, POST'],
  ['GET', '/sessions/s1', 'DELETE'],
  ['POST', '/healthz', 'GET'],
])('%s %s on a known path is 405 with Allow: %s', async (method, path, allow) => {
  const r = await call(method, path);
  expect(r.status).toBe(405);
  expect(r.headers.get('allow')).toBe(allow);
  shape(r);
  expect(r.json.error.type).toBe('method_not_allowed');
  expect(r.json.error.details).toEqual({ allow: allow.split(', ') });
});

test('OPTIONS on a known path answers the methods it serves, as a 405 lists them; no key needed; 404 elsewhere', async () => {
  for (const [path, allow] of [
    ['/tasks/task_x', 'GET, PATCH'],
    ['/healthz', 'GET'],
    ['/datastores', 'GET, POST'],
    ['/datastores/ds_0123456789abcdef0123456789abcdef/documents', 'GET, POST'],
  ]) {
    for (const key of [undefined, null]) {
      const r = await call('OPTIONS', path, { key });
      expect([path, key, r.status, r.headers.get('allow')]).toEqual([path, key, 204, allow]);
    }
  }
  expect((await call('OPTIONS', '/nowhere')).status).toBe(404);
});

test('Idempotency-Key: a repeat returns the first answer and starts nothing new; a different body is 422', async () => {
  const key = `idem-${Date.now()}`;
  const a = await call('POST', '/', {
    body: { message: 'once only', background: true },
    headers: { 'idempotency-key': key },
  });
  const b = await call('POST', '/', {
    body: { message: 'once only', background: true },
    headers: { 'idempotency-key': key },
  });
  expect(a.status).toBe(202);
  expect(b.status).toBe(202);
  expect(b.json.task_id).toBe(a.json.task_id);
  expect(b.json.created_at).toBe(a.json.created_at);
  expect(b.headers.get('idempotent-replayed')).toBe('true');
  const list = await call('GET', `/tasks?session=${a.json.session}`);
  expect(list.json.tasks).toHaveLength(1);
  const c = await call('POST', '/', {
    body: { message: 'something else', background: true },
    headers: { 'idempotency-key': key },
  });
  expect(c.status).toBe(422);
  expect(a.headers.get('idempotent-replayed')).toBeNull();
  // Sync repeats get the same result, and say they are repeats, in JSON and in a stream.
  const k2 = `idem-sync-${Date.now()}`;
  const s1 = await call('POST', '/', { body: { message: 'sync once' }, headers: { 'idempotency-key': k2 } });
  const s2 = await call('POST', '/', { body: { message: 'sync once' }, headers: { 'idempotency-key': k2 } });
  expect(s2.json).toEqual(s1.json);
  expect(s1.headers.get('idempotent-replayed')).toBeNull();
  expect(s2.headers.get('idempotent-replayed')).toBe('true');
  const k3 = `idem-sse-${Date.now()}`;
  const stream = (key: string) =>
    call('POST', '/', {
      body: { message: 'streamed once' },
      headers: { 'idempotency-key': key, accept: 'text/event-stream' },
    });
  const e1 = await stream(k3);
  const e2 = await stream(k3);
  expect(e1.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(e1.headers.get('idempotent-replayed')).toBeNull();
  expect(e2.headers.get('idempotent-replayed')).toBe('true');
  expect(e2.headers.get('x-task-id')).toBe(e1.headers.get('x-task-id'));
  expect(e2.text).toContain('agent_completed');
});

test('the gateway survives a burst of garbage', async () => {
  const bodies = [
    '',
    'null',
    '"str"',
    '{"message": null}',
    '{"message": 5}',
    '{'.repeat(1000),
    '{"message":"x","metadata":[]}',
  ];
  const rs = await Promise.all(
    bodies.map((raw) => call('POST', '/', { raw, headers: { 'content-type': 'application/json' } })),
  );
  for (const r of rs) expect(r.status).toBe(400);
  expect((await call('GET', '/healthz')).status).toBe(200);
});

test('the accounts CLI creates keys (stored hashed) that the gateway accepts, and revokes them', async () => {
  const { execFileSync } = await import('node:child_process');
  const path = await import('node:path');
  const root = path.resolve(__dirname, '../..');
  // The CLI encrypts the registry's signals with the service's keys, as an operator's shell would hold them.
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: ctx.stack().temporalAddress,
    PAYLOAD_KEYS: ctx.stack().env.PAYLOAD_KEYS,
  };
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [...TS_LOADER_ARGS, path.join(root, 'src/cli/accounts.ts'), ...args], {
      env,
      cwd: root,
      encoding: 'utf8',
    });
  const out = cli('add', 'acme');
  const key = /API key (\S+)/.exec(out)![1];
  const r = await call('POST', '/', { body: { message: 'from acme' }, key });
  expect(r.status).toBe(200);
  expect(cli('limit', 'acme', '3')).toContain('at most 3');
  const listed = cli('list');
  expect(listed).toContain('acme\tkeys=1\tmaxRunning=3');
  expect(listed).not.toContain(key); // only hashes are stored
  expect(cli('revoke', key)).toContain('revoked');
  // The gateway's directory refreshes every 5 s: the key is refused from the next refresh on.
  await waitUntil(
    'the revoked key to be refused',
    () => call('GET', '/tasks', { key }),
    (res) => res.status === 401,
    { stepMs: 250 },
  );
});
