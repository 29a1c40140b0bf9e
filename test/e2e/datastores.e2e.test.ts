// Datastores end to end (SPEC 2.1): a real PostgreSQL (Debian's, started here)
// and real SQLite files registered over HTTP, the agent's tools running real
// queries under the read-only rules, a documents knowledge base, isolation
// between accounts, secrets kept out of histories, engine files and logs, and
// registrations that survive a restart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startStack, Stack } from '../../src/dev/launcher/stack';
import { ChildLogs } from '../../src/dev/launcher/child-logs';
import { api, Api, cleanEnv, formOf, KEY_A, KEY_B, waitUntil, withTemporal } from './helpers';
import { readEngineData } from './raw-history';
import { codecFromKeys } from '../../src/common/codec/data-converter';
import { adminQuery, startPostgres, TestPostgres } from '../common/datastores/postgres-server';

jest.setTimeout(180_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-datastores-'));
const sqliteRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-sqlite-root-'));
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-datastores-logs-'));
let childLogs = new ChildLogs({ dir: logDir });
let pg: TestPostgres;
let stack: Stack;
let call: Api;
let callB: Api;

const start = async () => {
  stack = await startStack({
    dataDir,
    gatewayPort: 0,
    temporalPort: 0,
    demoMcpPort: 0,
    demoWebPort: 0,
    childLogs,
    env: {
      ...cleanEnv(),
      PAYLOAD_KEYS: '',
      API_KEYS: `${KEY_A}:alice,${KEY_B}:bob`,
      LOG_LEVEL: 'debug',
      DATASTORE_SQLITE_ROOT: sqliteRoot,
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    },
  });
  call = api(stack);
  callB = (method, p, opts = {}) => call(method, p, { ...opts, key: KEY_B });
};

beforeAll(async () => {
  pg = await startPostgres();
  seedSqlite(path.join(sqliteRoot, 'shop.db'));
  await start();
});
afterAll(async () => {
  await stack?.stop();
  await childLogs.close();
  await pg?.stop();
  for (const d of [dataDir, sqliteRoot, logDir]) fs.rmSync(d, { recursive: true, force: true });
});

function seedSqlite(file: string): void {
  const db = new Database(file);
  db.exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
    INSERT INTO customers (name, city) VALUES ('Ada', 'London'), ('Grace', 'Arlington'), ('Linus', 'Helsinki');`);
  db.close();
}

const run = async (message: string, extra: object) => {
  const r = await call('POST', '/', { body: { message, ...extra } });
  expect(r.status).toBe(200);
  return r.json as { status: string; output: string; task_id: string; events: { type: string; content?: string }[] };
};

/** What the agent's tool said (the scripted model's last line repeats it). */
const toolSaid = (output: string) => JSON.parse(output.replace(/^tool said: /, ''));

let pgId: string;
let sqliteId: string;
let docsId: string;

test("registration checks the source first: the database's own error is a 422, secrets never come back", async () => {
  const wrong = pg.url.replace(`:${pg.password}@`, ':not-the-password@');
  const denied = await call('POST', '/datastores', { body: { name: 'shop', type: 'postgres', connection_url: wrong } });
  expect(denied.status).toBe(422);
  expect(denied.json.error.message).toMatch(/password authentication failed/);
  expect(denied.text).not.toContain('not-the-password');
  const closed = await call('POST', '/datastores', {
    body: { name: 'shop', type: 'postgres', connection_url: 'postgres://agent:x@127.0.0.1:9/shop' },
  });
  expect(closed.status).toBe(422);
  expect(closed.json.error.details[0]).toMatchObject({ path: 'body.connection_url', code: 'unreachable' });
  const outside = await call('POST', '/datastores', { body: { name: 'etc', type: 'sqlite', path: '/etc/passwd' } });
  expect(outside.status).toBe(422);
  expect(outside.json.error.message).toMatch(/outside the service's SQLite folder/);
  const notDb = await call('POST', '/datastores', {
    form: formOf({ name: 'junk' }, { data: 'this is not a database at all, just text', name: 'junk.db' }),
  });
  expect(notDb.status).toBe(422);
  expect(notDb.json.error.details[0]).toMatchObject({ path: 'body.file', code: 'unreachable' });
  // SQLite would open an empty file as an empty database: an empty upload is refused all the same.
  const empty = await call('POST', '/datastores', { form: formOf({ name: 'empty' }, { data: '', name: 'empty.db' }) });
  expect(empty.status).toBe(422);
  expect(empty.json.error.details[0]).toMatchObject({ path: 'body.file', code: 'unreachable' });
  expect(empty.json.error.message).toMatch(/the file is empty/);
  // What the document states (a type it lists, a name of its form) is a 400.
  expect((await call('POST', '/datastores', { body: { name: 'x', type: 'mysql' } })).status).toBe(400);
  expect(
    (await call('POST', '/datastores', { body: { name: 'bad name', type: 'documents' } })).json.error.details[0].path,
  ).toBe('body.name');

  const ok = await call('POST', '/datastores', {
    body: {
      name: 'shop',
      type: 'postgres',
      connection_url: pg.url,
      allow_sql: true,
      description: 'orders and customers',
      query_timeout_ms: 500,
    },
  });
  expect(ok.status).toBe(201);
  expect(ok.json).toMatchObject({
    id: expect.stringMatching(/^ds_[0-9a-f]{32}$/),
    name: 'shop',
    type: 'postgres',
    allow_sql: true,
    query_timeout_ms: 500,
    max_rows: 200,
  });
  expect(ok.text).not.toContain(pg.password);
  pgId = ok.json.id;
  expect((await call('POST', '/datastores', { body: { name: 'SHOP', type: 'documents' } })).status).toBe(409);
  sqliteId = (await call('POST', '/datastores', { body: { name: 'local', type: 'sqlite', path: 'shop.db' } })).json.id;
  docsId = (await call('POST', '/datastores', { body: { name: 'kb', type: 'documents', description: 'the handbook' } }))
    .json.id;
  const list = await call('GET', '/datastores');
  expect(list.json.datastores.map((d: { name: string }) => d.name)).toEqual(['shop', 'local', 'kb']);
  expect(list.text).not.toMatch(new RegExp(`${pg.password}|connection|127\\.0\\.0\\.1|shop\\.db`));
});

test('named queries bind their parameters (one and two), and a parameter never becomes SQL', async () => {
  const queries = [
    {
      name: 'customer_city',
      description: 'The city of a customer by name',
      query: 'SELECT city FROM customers WHERE name = $1',
    },
    {
      name: 'orders_between',
      description: 'Orders with totals between two amounts',
      query: 'SELECT id, total FROM orders WHERE total BETWEEN $1 AND $2 ORDER BY id',
    },
  ];
  const datastores = [{ id: pgId, name: 'shop' }];
  const one = await run('[[tool name=customer_city args={"p1":"Ada"}]] where does Ada live?', { datastores, queries });
  expect(one.status).toBe('completed');
  expect(toolSaid(one.output)).toMatchObject({ columns: ['city'], rows: [['London']], truncated: false });
  const two = await run('[[tool name=orders_between args={"p1":10,"p2":60}]] which orders?', { datastores, queries });
  expect(toolSaid(two.output).rows).toEqual([
    [2, '35.00'],
    [4, '12.25'],
    [6, '45.10'],
  ]);
  // A named query whose text writes: it passes the statement check (it starts WITH) and the database's read-only transaction refuses it.
  const purge = await run('[[tool name=purge args={"p1":0}]] tidy up', {
    datastores,
    queries: [
      {
        name: 'purge',
        description: 'x',
        query: 'WITH gone AS (DELETE FROM orders WHERE total > $1 RETURNING id) SELECT count(*) FROM gone',
      },
    ],
  });
  expect(purge.output).toMatch(/tool said: Error: .*read-only/);
  expect(await count('orders')).toBe(8);
  const attack = await run(`[[tool name=customer_city args={"p1":"x' OR '1'='1'; DROP TABLE customers; --"}]] hack`, {
    datastores,
    queries,
  });
  expect(toolSaid(attack.output)).toMatchObject({ rows: [] });
  expect(await count('customers')).toBe(5);
});

test("the agent's own SQL is read-only: writes and second statements are refused, a slow query is stopped, rows are capped", async () => {
  const datastores = [{ id: pgId, name: 'shop' }];
  const write = await run(
    '[[tool name=query_shop args={"sql":"INSERT INTO customers (name) VALUES (\'Mallory\')"}]] add',
    { datastores },
  );
  expect(write.output).toMatch(/tool said: Error: .*(only a read|read-only)/);
  const sneaky = await run(
    '[[tool name=query_shop args={"sql":"WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM gone"}]] go',
    { datastores },
  );
  expect(sneaky.output).toMatch(/tool said: Error: .*read-only/);
  const twice = await run('[[tool name=query_shop args={"sql":"SELECT 1; DELETE FROM orders"}]] go', { datastores });
  expect(twice.output).toMatch(/tool said: Error: .*more than one statement/);
  expect([await count('customers'), await count('orders')]).toEqual([5, 8]);
  const slow = await run('[[tool name=query_shop args={"sql":"SELECT pg_sleep(10)"}]] wait', { datastores });
  expect(slow.output).toMatch(/tool said: Error: the query ran past its time limit of 0.5 s/);
  const many = await run('[[tool name=query_shop args={"sql":"SELECT n FROM numbers ORDER BY n"}]] all', {
    datastores,
  });
  expect(toolSaid(many.output)).toMatchObject({
    row_count: 200,
    truncated: true,
    note: expect.stringMatching(/first 200 rows/),
  });
  const described = await run('[[tool name=describe_shop]] what tables?', { datastores });
  expect(toolSaid(described.output).tables.map((t: { name: string }) => t.name)).toEqual(
    expect.arrayContaining(['customers', 'orders', 'numbers', 'sales.targets']),
  );
});

test('cancelling a task stops its query on the database, and the datastore serves the next call at once', async () => {
  // The longest time limit a datastore may have (5 min), past the test's timeout: a call stopped by
  // its time limit rather than by the database would not end within this test.
  const slow = { allow_sql: true, query_timeout_ms: 300_000 };
  const pgSlow = (
    await call('POST', '/datastores', { body: { name: 'pgslow', type: 'postgres', connection_url: pg.url, ...slow } })
  ).json.id;
  const liteSlow = (
    await call('POST', '/datastores', { body: { name: 'liteslow', type: 'sqlite', path: 'shop.db', ...slow } })
  ).json.id;
  const sleeping = async () =>
    Number(
      (
        await adminQuery(
          pg,
          "SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(100)%'",
        )
      ).rows[0].n,
    );
  const background = async (message: string, datastores: object[]) =>
    (await call('POST', '/', { body: { message, background: true, datastores } })).json.task_id as string;

  const pgTask = await background('[[tool name=query_pgslow args={"sql":"SELECT pg_sleep(100)"}]] wait', [
    { id: pgSlow, name: 'pgslow' },
  ]);
  await waitUntil('the PostgreSQL query sleeping in pg_stat_activity', sleeping, (n) => n === 1);
  expect((await call('POST', `/tasks/${pgTask}/cancel`)).status).toBe(202);
  // pg_sleep(100) outlasts this wait: only the database stopping the query ends it in time.
  await waitUntil('the PostgreSQL query to stop', sleeping, (n) => n === 0);

  const count =
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000000) SELECT count(*) FROM c';
  const liteTask = await background(`[[tool name=query_liteslow args=${JSON.stringify({ sql: count })}]] count`, [
    { id: liteSlow, name: 'liteslow' },
  ]);
  // The call has heartbeated (once a second while it runs): the count is under way on the reader.
  await withTemporal(stack, (client) =>
    waitUntil(
      'the SQLite call running, with a heartbeat',
      async () =>
        !!(await client.workflow.getHandle(liteTask).describe()).raw.pendingActivities?.some(
          (a) => a.activityType?.name === 'callDatastore' && a.lastHeartbeatTime,
        ),
    ),
  );
  expect((await call('POST', `/tasks/${liteTask}/cancel`)).status).toBe(202);
  // The count would run for minutes: the next call is served because the cancel stopped it.
  const answered = await run('[[tool name=query_liteslow args={"sql":"SELECT count(*) FROM customers"}]] how many?', {
    datastores: [{ id: liteSlow, name: 'liteslow' }],
  });
  expect(toolSaid(answered.output).rows).toEqual([[3]]);
  for (const id of [pgTask, liteTask]) expect((await call('GET', `/tasks/${id}`)).json.status).toBe('cancelled');
  for (const id of [pgSlow, liteSlow]) expect((await call('DELETE', `/datastores/${id}`)).status).toBe(204);
});

test('SQLite: a file by path and an upload, each with ? markers', async () => {
  const upload = fs.readFileSync(path.join(sqliteRoot, 'shop.db'));
  const up = await call('POST', '/datastores', {
    form: formOf({ name: 'uploaded' }, { data: upload, name: 'shop.db', type: 'application/vnd.sqlite3' }),
  });
  expect(up.status).toBe(201);
  expect(up.json).toMatchObject({ type: 'sqlite', uploaded: true });
  const queries = [
    { name: 'city', description: 'A city', query: 'SELECT city FROM customers WHERE name = ?', datastore: 'local' },
  ];
  const byPath = await run('[[tool name=city args={"p1":"Grace"}]] where?', {
    datastores: [
      { id: sqliteId, name: 'local' },
      { id: up.json.id, name: 'up' },
    ],
    queries,
  });
  expect(toolSaid(byPath.output).rows).toEqual([['Arlington']]);
  const own = await run('[[tool name=describe_up]] tables?', { datastores: [{ id: up.json.id, name: 'up' }] });
  expect(toolSaid(own.output).tables[0]).toMatchObject({ name: 'customers' });
  expect((await call('DELETE', `/datastores/${up.json.id}`)).status).toBe(204);
  expect(fs.readdirSync(path.join(dataDir, 'datastores')).some((f) => f.startsWith(up.json.id))).toBe(false);
});

test('documents: added (JSON and a file), searched by the agent, removed', async () => {
  const added = await call('POST', `/datastores/${docsId}/documents`, {
    body: {
      documents: [
        { id: 'leave', title: 'Leave policy', content: 'Employees get 25 days of paid leave per year.' },
        { id: 'travel', title: 'Travel', content: 'Book trains for trips under four hours.' },
      ],
    },
  });
  expect(added.status).toBe(201);
  const text = await call('POST', `/datastores/${docsId}/documents`, {
    form: formOf(
      { id: 'security', title: 'Security' },
      { data: '# Security\nRotate passwords every quarter.', name: 'security.md' },
    ),
  });
  expect(text.json.documents[0]).toMatchObject({ id: 'security', format: 'markdown' });
  expect((await call('GET', `/datastores/${docsId}`)).json.documents).toBe(3);
  const search = async () =>
    toolSaid(
      (
        await run('[[tool name=search_kb args={"query":"paid leave days"}]] how much leave?', {
          datastores: [{ id: docsId, name: 'kb' }],
        })
      ).output,
    ).results;
  expect((await search())[0]).toMatchObject({
    id: 'leave',
    title: 'Leave policy',
    snippet: expect.stringContaining('['),
  });
  expect((await call('DELETE', `/datastores/${docsId}/documents/leave`)).status).toBe(204);
  expect((await search()).map((h: { id: string }) => h.id)).not.toContain('leave');
  expect((await call('DELETE', `/datastores/${docsId}/documents/leave`)).status).toBe(404);
  expect((await call('GET', `/datastores/${docsId}/documents?limit=1`)).json).toMatchObject({
    documents: [{ id: 'security' }],
    next_cursor: 'security',
  });
});

test('a run request is checked against the registrations: each problem a 422 naming its path', async () => {
  const r = await call('POST', '/', {
    body: {
      message: 'x',
      datastores: [
        { id: pgId, name: 'shop' },
        { id: 'ds_00000000000000000000000000000000', name: 'gone' },
      ],
      queries: [
        { name: 'two', description: 'd', query: 'SELECT 1; SELECT 2' },
        { name: 'kb', description: 'd', query: 'SELECT 1', datastore: 'nope' },
        { name: 'add', description: 'd', query: "INSERT INTO customers (name) VALUES ('Mallory')" },
      ],
    },
  });
  expect(r.status).toBe(422);
  expect(r.json.error.details.map((d: { path: string }) => d.path)).toEqual([
    'body.datastores[1].id',
    'body.queries[0].query',
    'body.queries[1].datastore',
    'body.queries[2].query',
  ]);
  expect(r.json.error.message).toMatch(/INSERT: only a read/);
});

test('another account sees none of it', async () => {
  expect((await callB('GET', '/datastores')).json.datastores).toEqual([]);
  expect((await callB('GET', `/datastores/${pgId}`)).status).toBe(404);
  expect((await callB('DELETE', `/datastores/${pgId}`)).status).toBe(404);
  expect((await callB('POST', `/datastores/${docsId}/documents`, { body: { content: 'x' } })).status).toBe(404);
  const r = await callB('POST', '/', { body: { message: 'x', datastores: [{ id: pgId, name: 'shop' }] } });
  expect(r.json.error.details[0]).toMatchObject({ path: 'body.datastores[0].id', code: 'unknown_datastore' });
});

test('connection details are in no history, engine file, answer or log; a restart keeps the registrations', async () => {
  const history = await decodedHistory('datastores:alice');
  expect(history).toContain('sealed:v1:');
  for (const secret of [pg.password, pg.url, `127.0.0.1:${pg.port}`, 'shop.db'])
    expect({ secret, found: history.includes(secret) }).toEqual({ secret, found: false });
  await stack.stop();
  await childLogs.close();
  for (const [file, text] of Object.entries(readEngineData(dataDir)))
    expect({ file, found: text.includes(pg.password) }).toEqual({ file, found: false });
  for (const file of fs.readdirSync(logDir))
    expect({ file, found: fs.readFileSync(path.join(logDir, file), 'utf8').includes(pg.password) }).toEqual({
      file,
      found: false,
    });
  childLogs = new ChildLogs({ dir: logDir });
  await start();
  expect((await call('GET', '/datastores')).json.datastores.map((d: { name: string }) => d.name)).toEqual([
    'shop',
    'local',
    'kb',
  ]);
  const after = await run(
    '[[tool name=query_shop args={"sql":"SELECT name FROM customers ORDER BY id LIMIT 1"}]] first?',
    { datastores: [{ id: pgId, name: 'shop' }] },
  );
  expect(toolSaid(after.output).rows).toEqual([['Ada']]);
  expect((await call('DELETE', `/datastores/${pgId}`)).status).toBe(204);
  expect((await call('GET', `/datastores/${pgId}`)).status).toBe(404);
});

/** The workflow's whole history as the Web UI shows it through the codec endpoint: every payload decoded. */
async function decodedHistory(workflowId: string): Promise<string> {
  const codec = codecFromKeys(stack.env.PAYLOAD_KEYS!);
  const events = await withTemporal(
    stack,
    async (c) => (await c.workflow.getHandle(workflowId).fetchHistory()).events ?? [],
  );
  const decode = async (v: unknown): Promise<unknown> => {
    if (Array.isArray(v)) return Promise.all(v.map(decode));
    if (!v || typeof v !== 'object' || v instanceof Uint8Array) return v;
    const o = v as Record<string, unknown>;
    if (o.metadata && o.data instanceof Uint8Array) {
      const [plain] = await codec.decode([o as never]);
      return Buffer.from(plain.data!).toString('utf8');
    }
    return Object.fromEntries(await Promise.all(Object.entries(o).map(async ([k, x]) => [k, await decode(x)])));
  };
  return JSON.stringify(await decode(events));
}

async function count(table: string): Promise<number> {
  return Number((await adminQuery(pg, `SELECT count(*) AS n FROM ${table}`)).rows[0].n);
}
