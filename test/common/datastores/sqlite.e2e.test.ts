import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../../src/common/datastores/sqlite';
import { DatastoreConnectionError, DatastoreQueryError, type SqlDatastore } from '../../../src/common/datastores/types';
import { waitUntil } from '../../support/wait-until';

const LIMITS = { timeoutMs: 5000, maxRows: 500 };
// Runs for minutes when nothing stops it: a single step in SQLite's native code.
const SLOW =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c';

let dir: string;
let shop: string;
let store: SqlDatastore;

function seed(file: string): void {
  const db = new Database(file);
  db.exec(`
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, tier VARCHAR(10));
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total NUMERIC, note BLOB, placed_at TEXT);
    CREATE TABLE numbers (n INTEGER NOT NULL);
    CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
    CREATE VIRTUAL TABLE notes USING fts5(body);
    INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'gold'), (2, 'Bob', NULL, 'silver'), (3, 'Cy', 'cy@example.com', NULL);
    INSERT INTO orders VALUES (1, 1, 250, x'0102', '2024-01-02'), (2, 1, 40, NULL, '2024-02-03'), (3, 2, 120.5, NULL, '2024-03-04');
    INSERT INTO notes VALUES ('hello');
  `);
  const add = db.prepare('INSERT INTO numbers VALUES (?)');
  db.transaction(() => {
    for (let n = 1; n <= 1000; n++) add.run(n);
  })();
  db.close();
}

const customers = () => new Database(shop, { readonly: true }).prepare('SELECT * FROM customers ORDER BY id').all();

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-datastore-'));
  shop = path.join(dir, 'shop.db');
  seed(shop);
  store = openSqlite(shop);
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The reader processes of `file` (the one process per store started with that file as its argument). */
function readers(file: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `sqlite-thread.* ${file}$`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}

/** CPU time a process has used, in clock ticks (utime + stime in /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts `slow` on an idle reader of `file` and waits until the reader is busy with it (100 ms of CPU: an idle reader uses none). */
async function underWay<T>(file: string, slow: () => Promise<T>): Promise<{ pid: number; running: Promise<T> }> {
  const [pid] = await waitUntil(
    `the reader of ${file}`,
    () => readers(file),
    (pids) => pids.length === 1,
  );
  const idle = cpuTicks(pid);
  const running = slow();
  running.catch(() => undefined);
  await waitUntil(
    'the reader busy with the query',
    () => cpuTicks(pid),
    (ticks) => ticks >= idle + 10,
  );
  return { pid, running };
}

async function refusal(p: Promise<unknown>): Promise<DatastoreQueryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatastoreQueryError);
  return err as DatastoreQueryError;
}

describe('openSqlite: reading', () => {
  it('proves the file is a SQLite database', async () => {
    await expect(store.check()).resolves.toBeUndefined();
  });

  it('describes tables and views, not internals or FTS shadow tables', async () => {
    const tables = await store.describe();
    expect(tables.map((t) => t.name)).toEqual(['big_orders', 'customers', 'notes', 'numbers', 'orders']);
    expect(tables.find((t) => t.name === 'customers')?.columns).toEqual([
      { name: 'id', type: 'INTEGER', nullable: true },
      { name: 'name', type: 'TEXT', nullable: false },
      { name: 'email', type: 'TEXT', nullable: true },
      { name: 'tier', type: 'VARCHAR(10)', nullable: true },
    ]);
    expect(tables.find((t) => t.name === 'big_orders')?.columns.map((c) => c.name)).toEqual([
      'id',
      'customer_id',
      'total',
      'note',
      'placed_at',
    ]);
  });

  it('binds one and two ? parameters', async () => {
    const one = await store.query('SELECT name FROM customers WHERE id = ?', [2], LIMITS);
    expect(one).toMatchObject({ columns: ['name'], rows: [['Bob']], truncated: false });
    expect(one.elapsedMs).toBeGreaterThanOrEqual(0);
    const two = await store.query(
      'SELECT c.name, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = ? AND o.total > ? ORDER BY o.id',
      [1, 100],
      LIMITS,
    );
    expect(two.rows).toEqual([['Ada', 250]]);
  });

  it('gives JSON-safe values: bytes as a size, big integers as text', async () => {
    const r = await store.query(
      "SELECT note, 9007199254740993, 42, 1.5, NULL, 'x' FROM orders WHERE id = 1",
      [],
      LIMITS,
    );
    expect(r.rows).toEqual([['<2 bytes>', '9007199254740993', 42, 1.5, null, 'x']]);
  });

  it('keeps a parameter as data (no injection)', async () => {
    const r = await store.query('SELECT count(*) AS n FROM customers WHERE name = ?', ["x' OR '1'='1"], LIMITS);
    expect(r.rows).toEqual([[0]]);
    const drop = await store.query('SELECT ? AS v', ['1; DROP TABLE customers; --'], LIMITS);
    expect(drop.rows).toEqual([['1; DROP TABLE customers; --']]);
    expect(customers()).toHaveLength(3);
  });

  it('cuts rows at maxRows and says so', async () => {
    const r = await store.query('SELECT n FROM numbers ORDER BY n', [], { timeoutMs: 5000, maxRows: 200 });
    expect(r.rows).toHaveLength(200);
    expect(r.rows[199]).toEqual([200]);
    expect(r.truncated).toBe(true);
    const all = await store.query('SELECT n FROM numbers', [], { timeoutMs: 5000, maxRows: 1000 });
    expect(all.truncated).toBe(false);
  });
});

describe('openSqlite: refusals and errors', () => {
  it.each([
    "INSERT INTO customers VALUES (9, 'Eve', NULL, NULL)",
    "UPDATE customers SET name = 'Eve'",
    'DELETE FROM customers',
    'CREATE TABLE t (a)',
    'CREATE TEMP TABLE t (a)',
    'DROP TABLE orders',
    `ATTACH DATABASE '${'x'}.db' AS x`,
    'PRAGMA query_only = OFF',
    "PRAGMA journal_mode = 'delete'",
    `VACUUM INTO '${'/tmp/copy'}.db'`,
    'BEGIN',
  ])('refuses %p and the data stays', async (sql) => {
    const before = customers();
    const err = await refusal(store.query(sql, [], LIMITS));
    expect(err.kind).toBe('refused');
    expect(customers()).toEqual(before);
    expect((await store.describe()).map((t) => t.name)).toContain('orders');
  });

  it('refuses two statements', async () => {
    const err = await refusal(store.query('SELECT 1; SELECT 2', [], LIMITS));
    expect(err).toMatchObject({ kind: 'refused', message: expect.stringMatching(/one statement at a time/) });
  });

  it('says invalid, with SQLite message, for syntax, unknown names and a wrong parameter count', async () => {
    expect(await refusal(store.query('SELEC 1', [], LIMITS))).toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(/syntax error/),
    });
    expect(await refusal(store.query('SELECT * FROM nope', [], LIMITS))).toMatchObject({
      kind: 'invalid',
      message: 'no such table: nope',
    });
    expect(await refusal(store.query('SELECT nope FROM customers', [], LIMITS))).toMatchObject({
      kind: 'invalid',
      message: 'no such column: nope',
    });
    expect(await refusal(store.query('SELECT ?', [], LIMITS))).toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(/Too few parameter/),
    });
    expect(await refusal(store.query('SELECT ?', [1, 2], LIMITS))).toMatchObject({ kind: 'invalid' });
    expect(await refusal(store.query("SELECT load_extension('x')", [], LIMITS))).toMatchObject({
      kind: 'invalid',
      message: 'not authorized',
    });
  });

  it('reports a missing file and a file that is not SQLite as connection errors', async () => {
    const missing = openSqlite(path.join(dir, 'absent.db'));
    const junk = path.join(dir, 'junk.db');
    fs.writeFileSync(junk, 'this is not a database, only text long enough to have a header. '.repeat(20));
    const notDb = openSqlite(junk);
    try {
      for (const s of [missing, notDb]) {
        const err = await s.check().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DatastoreConnectionError);
        expect((err as DatastoreConnectionError).retryable).toBe(false);
      }
      await expect(notDb.query('SELECT 1 FROM t', [], LIMITS)).rejects.toBeInstanceOf(DatastoreConnectionError);
    } finally {
      await Promise.all([missing.close(), notDb.close()]);
    }
  });
});

describe('openSqlite: time, concurrency, life cycle', () => {
  it('cancels a query past its time limit, and the next one runs', async () => {
    // The count runs for minutes: only the limit ends it within the test.
    const err = await refusal(store.query(SLOW, [], { timeoutMs: 300, maxRows: 10 }));
    expect(err).toMatchObject({
      kind: 'timeout',
      message: 'the query ran past its time limit of 0.3 s and was cancelled',
    });
    const next = await store.query('SELECT count(*) FROM numbers', [], LIMITS);
    expect(next.rows).toEqual([[1000]]);
  });

  it('stops the query in flight and drops a queued one when their signals fire; the next runs on a new reader', async () => {
    const [first, second] = [new AbortController(), new AbortController()];
    await store.query('SELECT 1', [], LIMITS); // a reader, idle
    // The count to a billion takes minutes; its limit, a minute, is past the test's timeout too.
    const { pid, running } = await underWay(shop, () =>
      refusal(store.query(SLOW, [], { timeoutMs: 60_000, maxRows: 10 }, first.signal)),
    );
    const queued = refusal(store.query('SELECT 1', [], LIMITS, second.signal));
    second.abort();
    expect(await queued).toMatchObject({ kind: 'cancelled', message: 'the query was cancelled' });
    first.abort();
    expect(await running).toMatchObject({ kind: 'cancelled' });
    // Stopped on the reader: the process that was counting is gone (killed), and a new one answers the next call.
    await waitUntil('the counting reader to be gone', () => !alive(pid));
    const next = await store.query('SELECT count(*) FROM numbers', [], LIMITS);
    expect(next.rows).toEqual([[1000]]);
    expect(await refusal(store.query('SELECT 1', [], LIMITS, first.signal))).toMatchObject({ kind: 'cancelled' });
  });

  it('answers five queries made at once, in order', async () => {
    const all = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => store.query('SELECT n FROM numbers WHERE n = ?', [n], LIMITS)),
    );
    expect(all.map((r) => r.rows[0][0])).toEqual([1, 2, 3, 4, 5]);
  });

  it("counts a queued query's limit from its start", async () => {
    const slow = store.query(SLOW, [], { timeoutMs: 400, maxRows: 10 });
    const queued = store.query('SELECT 1', [], { timeoutMs: 300, maxRows: 10 });
    await expect(slow).rejects.toMatchObject({ kind: 'timeout' });
    await expect(queued).resolves.toMatchObject({ rows: [[1]] });
  });

  it('keeps the event loop free during a long query', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      await expect(store.query(SLOW, [], { timeoutMs: 600, maxRows: 10 })).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThanOrEqual(15);
  });

  it('lets the reader go when idle and starts another on the next call', async () => {
    const own = path.join(dir, 'idle.db');
    fs.copyFileSync(shop, own);
    const idle = openSqlite(own, { idleMs: 100 });
    try {
      expect((await idle.query('SELECT 1', [], LIMITS)).rows).toEqual([[1]]);
      const [first] = readers(own);
      expect(first).toEqual(expect.any(Number));
      await waitUntil(
        'the idle reader to go',
        () => readers(own),
        (pids) => pids.length === 0,
      );
      expect((await idle.query('SELECT 2', [], LIMITS)).rows).toEqual([[2]]);
      const again = readers(own);
      expect(again).toHaveLength(1);
      expect(again[0]).not.toBe(first);
    } finally {
      await idle.close();
    }
  });

  it('fails the call in flight as retryable when the reader dies, and recovers', async () => {
    const own = path.join(dir, 'crash.db');
    fs.copyFileSync(shop, own);
    const crashing = openSqlite(own);
    try {
      await crashing.query('SELECT 1', [], LIMITS); // a reader, idle
      // The reader is the one process started with this test's own file as its argument.
      const { pid, running } = await underWay(own, () => crashing.query(SLOW, [], { timeoutMs: 10_000, maxRows: 10 }));
      process.kill(pid, 'SIGKILL');
      const err = await running.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatastoreConnectionError);
      expect(err).toMatchObject({ retryable: true, message: expect.stringMatching(/exited unexpectedly \(SIGKILL\)/) });
      expect((await crashing.query('SELECT 7', [], LIMITS)).rows).toEqual([[7]]);
    } finally {
      await crashing.close();
    }
  });

  it('refuses calls after close', async () => {
    const closed = openSqlite(shop);
    await closed.close();
    await expect(closed.query('SELECT 1', [], LIMITS)).rejects.toBeInstanceOf(DatastoreConnectionError);
  });
});
