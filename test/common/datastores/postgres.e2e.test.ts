// The PostgreSQL datastore against a real server: what it refuses, cuts and
// times out is enforced by PostgreSQL, so it is tested there.
import pg from 'pg';
import { openPostgres, scrubSecrets } from '../../../src/common/datastores/postgres';
import { jsonSafe } from '../../../src/common/datastores/postgres-values';
import { DatastoreConnectionError, DatastoreQueryError, type SqlDatastore } from '../../../src/common/datastores/types';
import { freePort } from '../../../src/dev/launcher/processes';
import { OutboundPolicy } from '../../../src/common/outbound/policy';
import { adminQuery, startPostgres, type TestPostgres } from './postgres-server';
import { waitUntil } from '../../support/wait-until';

const LIMITS = { timeoutMs: 5000, maxRows: 200 };

let server: TestPostgres;
let store: SqlDatastore;

beforeAll(async () => {
  server = await startPostgres();
  store = openPostgres(server.url, {});
}, 120_000);

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

async function adminCount(table: string): Promise<number> {
  return Number((await adminQuery(server, `SELECT count(*) AS n FROM ${table}`)).rows[0].n);
}

/** Statements sleeping on the server right now (seen from another session). */
async function sleepers(): Promise<number> {
  const { rows } = await adminQuery(
    server,
    "SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(600)%'",
  );
  return Number(rows[0].n);
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

async function refusedKind(sql: string, params: unknown[] = []): Promise<DatastoreQueryError> {
  const err = await failure(store.query(sql, params, LIMITS));
  expect(err).toBeInstanceOf(DatastoreQueryError);
  return err as DatastoreQueryError;
}

describe('connecting', () => {
  it('checks a reachable database', async () => {
    await expect(store.check()).resolves.toBeUndefined();
  });

  it('refuses a wrong password for good, without echoing it', async () => {
    const url = server.url.replace(server.password, 'not-the-password-42');
    const bad = openPostgres(url, {});
    try {
      const err = await failure(bad.check());
      expect(err).toBeInstanceOf(DatastoreConnectionError);
      expect((err as DatastoreConnectionError).retryable).toBe(false);
      expect(err.message).toMatch(/password authentication failed/);
      expect(err.message).not.toContain('not-the-password-42');
      expect(err.message).not.toContain(url);
    } finally {
      await bad.close();
    }
  });

  it('calls a closed port retryable', async () => {
    const bad = openPostgres(`postgres://agent:pw@127.0.0.1:${await freePort()}/shop`, { connectTimeoutMs: 2000 });
    try {
      const err = await failure(bad.check());
      expect(err).toBeInstanceOf(DatastoreConnectionError);
      expect((err as DatastoreConnectionError).retryable).toBe(true);
      expect(err.message).toMatch(/ECONNREFUSED/);
    } finally {
      await bad.close();
    }
  });

  it('refuses an unknown database and a URL that is not postgres://, without echoing it', async () => {
    const bad = openPostgres(server.url.replace('/shop', '/nowhere'), {});
    try {
      const err = await failure(bad.check());
      expect((err as DatastoreConnectionError).retryable).toBe(false);
      expect(err.message).toMatch(/database "nowhere" does not exist/);
    } finally {
      await bad.close();
    }
    const thrown = (() => {
      try {
        openPostgres('mysql://root:hunter22@db/shop', {});
      } catch (err) {
        return err as DatastoreConnectionError;
      }
    })();
    expect(thrown).toBeInstanceOf(DatastoreConnectionError);
    expect(thrown!.retryable).toBe(false);
    expect(thrown!.message).not.toMatch(/hunter22|mysql:/);
  });

  it('refuses TLS the server lacks, an unknown sslmode and a Unix socket', async () => {
    const tls = openPostgres(`${server.url}?sslmode=require`, {});
    try {
      const err = await failure(tls.check());
      expect(err).toMatchObject({ retryable: false, message: expect.stringMatching(/does not support SSL/) });
    } finally {
      await tls.close();
    }
    expect(() => openPostgres(`${server.url}?sslmode=sometimes`, {})).toThrow(/unknown sslmode/);
    expect(() => openPostgres('postgres://agent:pw@db/shop?host=/var/run/postgresql', {})).toThrow(
      /Unix sockets are not supported/,
    );
    expect(() => openPostgres('postgres:///shop', {})).toThrow(/Unix sockets are not supported/);
  });

  it('survives the server ending its idle connections', async () => {
    await store.query('SELECT 1', [], LIMITS);
    const client = new pg.Client(server.adminUrl);
    await client.connect();
    await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'agent'");
    await client.end();
    await waitUntil(
      "the server to end the store's connections",
      async () =>
        Number(
          (await adminQuery(server, "SELECT count(*) AS n FROM pg_stat_activity WHERE usename = 'agent'")).rows[0].n,
        ),
      (n) => n === 0,
    );
    expect((await store.query('SELECT 2', [], LIMITS)).rows).toEqual([[2]]);
  });

  it('asks the outbound policy about the host before connecting', async () => {
    const refused = openPostgres(server.url, { policy: new OutboundPolicy('') });
    try {
      const err = await failure(refused.check());
      expect(err).toBeInstanceOf(DatastoreConnectionError);
      expect((err as DatastoreConnectionError).retryable).toBe(false);
      expect(err.message).toContain(`postgres://127.0.0.1:${server.port}/shop resolves to 127.0.0.1`);
      expect(err.message).not.toContain(server.password);
    } finally {
      await refused.close();
    }
    const allowed = openPostgres(server.url, { policy: new OutboundPolicy('127.0.0.1') });
    try {
      await expect(allowed.check()).resolves.toBeUndefined();
    } finally {
      await allowed.close();
    }
  });
});

describe('describe', () => {
  it('lists the tables the role reads, with columns and types', async () => {
    const tables = await store.describe();
    expect(tables.map((t) => t.name).sort()).toEqual(['customers', 'numbers', 'orders', 'sales.targets']);
    const customers = tables.find((t) => t.name === 'customers')!;
    expect(customers.columns).toEqual([
      { name: 'id', type: 'integer', nullable: false },
      { name: 'name', type: 'text', nullable: false },
      { name: 'city', type: 'text', nullable: true },
      { name: 'created_at', type: 'timestamp with time zone', nullable: true },
    ]);
    expect(tables.find((t) => t.name === 'orders')!.columns.map((c) => c.type)).toEqual([
      'integer',
      'integer',
      'numeric',
      'date',
    ]);
  });
});

describe('query', () => {
  it('binds one parameter and two', async () => {
    const one = await store.query('SELECT name FROM customers WHERE city = $1', ['London'], LIMITS);
    expect(one).toMatchObject({ columns: ['name'], rows: [['Ada']], truncated: false });
    expect(one.elapsedMs).toBeGreaterThanOrEqual(0);
    const two = await store.query(
      'SELECT id, total FROM orders WHERE customer_id = $1 AND total > $2 ORDER BY id',
      [1, 50],
      LIMITS,
    );
    expect(two.rows).toEqual([[1, '120.50']]);
  });

  it('keeps an injection attempt in a parameter as data', async () => {
    const r = await store.query(
      'SELECT id FROM customers WHERE name = $1',
      ["' OR 1=1; DROP TABLE customers; --"],
      LIMITS,
    );
    expect(r.rows).toEqual([]);
    expect(await adminCount('customers')).toBe(5);
  });

  it.each([
    ["INSERT INTO customers(name) VALUES ('Eve')"],
    ["UPDATE customers SET city = 'Paris'"],
    ['DELETE FROM orders'],
    ['CREATE TABLE evil(x int)'],
    ['WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM gone'],
    ["SELECT nextval('customers_id_seq')"],
  ])('refuses a write: %s', async (sql) => {
    const err = await refusedKind(sql);
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/read-only/);
    expect(await adminCount('customers')).toBe(5);
    expect(await adminCount('orders')).toBe(8);
  });

  it('refuses two statements at once', async () => {
    const err = await refusedKind('SELECT 1; SELECT 2');
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/one statement at a time/);
    expect((await refusedKind('SELECT 1; DELETE FROM orders')).kind).toBe('refused');
    expect(await adminCount('orders')).toBe(8);
  });

  it('cancels a statement past its time limit, and the pool still serves', async () => {
    // Ten minutes of sleep: a limit that waited for the statement would hold the test to its timeout.
    const err = await failure(store.query('SELECT pg_sleep(600)', [], { timeoutMs: 300, maxRows: 10 }));
    expect(err).toBeInstanceOf(DatastoreQueryError);
    expect(err).toMatchObject({
      kind: 'timeout',
      message: 'the query ran past its time limit of 0.3 s and was cancelled',
    });
    // Cancelled on the server, not only given up on.
    await waitUntil('the timed-out statement to stop on the server', sleepers, (n) => n === 0);
    expect((await store.query('SELECT 1 AS one', [], LIMITS)).rows).toEqual([[1]]);
  });

  it('stops a statement on the server when its signal fires, and the pool still serves', async () => {
    const stop = new AbortController();
    // Ten minutes of sleep, under a limit past the test's timeout: only the signal stops it in time.
    const running = failure(store.query('SELECT pg_sleep(600)', [], { timeoutMs: 600_000, maxRows: 10 }, stop.signal));
    await waitUntil('the statement sleeping on the server', sleepers, (n) => n === 1, { stepMs: 50 });
    stop.abort();
    const err = await running;
    expect(err).toMatchObject({ kind: 'cancelled', message: 'the query was cancelled' });
    await waitUntil('the statement to stop on the server', sleepers, (n) => n === 0, { stepMs: 50 });
    const already = await failure(store.query('SELECT 1', [], LIMITS, stop.signal));
    expect(already).toMatchObject({ kind: 'cancelled' });
    expect((await store.query('SELECT 1 AS one', [], LIMITS)).rows).toEqual([[1]]);
  });

  it('cuts a result at maxRows', async () => {
    const big = await store.query('SELECT n FROM numbers ORDER BY n', [], LIMITS);
    expect(big.rows).toHaveLength(200);
    expect(big.rows[199]).toEqual([200]);
    expect(big.truncated).toBe(true);
    const small = await store.query('SELECT id FROM customers', [], LIMITS);
    expect(small.rows).toHaveLength(5);
    expect(small.truncated).toBe(false);
  });

  it.each([
    ['SELEC name FROM customers', [], /syntax error at or near "SELEC"/],
    ['SELECT nope FROM customers', [], /column "nope" does not exist/],
    ['SELECT * FROM nowhere', [], /relation "nowhere" does not exist/],
    ['SELECT name FROM customers WHERE id = $1 AND city = $2', [1], /bind message supplies 1 parameters/],
    ['SELECT 1 / $1::int', [0], /division by zero/],
  ])('calls %s invalid, with the database message', async (sql, params, message) => {
    const err = await refusedKind(sql, params);
    expect(err.kind).toBe('invalid');
    expect(err.message).toMatch(message);
  });

  it('answers JSON-safe values', async () => {
    const r = await store.query(
      `SELECT c.created_at, o.total, o.placed_at, 9007199254740993::bigint AS big, '\\x0102ff'::bytea AS raw,
              '{"a": [1, {"b": null}]}'::jsonb AS doc, '2024-01-02 03:04:05'::timestamp AS naive, 'NaN'::float8 AS nan
         FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.id = 1`,
      [],
      LIMITS,
    );
    expect(r.columns).toEqual(['created_at', 'total', 'placed_at', 'big', 'raw', 'doc', 'naive', 'nan']);
    expect(r.rows).toEqual([
      [
        '2024-01-15T09:30:00.000Z',
        '120.50',
        '2024-06-01',
        '9007199254740993',
        '<3 bytes>',
        { a: [1, { b: null }] },
        '2024-01-02T03:04:05',
        'NaN',
      ],
    ]);
    expect(JSON.parse(JSON.stringify(r.rows))).toEqual(r.rows);
    // Dates and timestamps without a zone stay as stored, whatever the process's time zone.
    const more = await store.query(
      "SELECT ARRAY['2024-01-02 03:04:05'::timestamp, NULL], ARRAY['2024-01-01'::date], '1 day 02:00'::interval",
      [],
      LIMITS,
    );
    expect(more.rows).toEqual([[['2024-01-02T03:04:05', null], ['2024-01-01'], '1 day 02:00:00']]);
  });

  it('serves 10 queries at once on a pool of 4', async () => {
    const small = openPostgres(server.url, { maxConnections: 4 });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => small.query('SELECT $1::int + 0 AS i, pg_sleep(0.05)', [i], LIMITS)),
      );
      expect(results.map((r) => r.rows[0][0])).toEqual(Array.from({ length: 10 }, (_, i) => i));
    } finally {
      await small.close();
    }
  });
});

describe('scrubSecrets', () => {
  const url = 'postgres://agent:s3cr%40t-pw@db.internal:5432/shop';

  it('removes the URL and the password, raw and decoded', () => {
    expect(scrubSecrets(`cannot use ${url}`, url)).toBe('cannot use ***');
    expect(scrubSecrets('auth failed with s3cr@t-pw and s3cr%40t-pw', url)).toBe('auth failed with *** and ***');
    expect(scrubSecrets('see postgres://other:hidden@elsewhere/db', url)).toBe('see postgres://other:***@elsewhere/db');
    expect(scrubSecrets('nothing to hide', url)).toBe('nothing to hide');
  });

  it('turns values JSON can carry', () => {
    expect(jsonSafe([10n, new Date(0), Buffer.alloc(4), Infinity, { d: new Date(0) }])).toEqual([
      '10',
      '1970-01-01T00:00:00.000Z',
      '<4 bytes>',
      'Infinity',
      { d: '1970-01-01T00:00:00.000Z' },
    ]);
  });
});
