// The datastore tool activity, with the sources stubbed (the real drivers are
// tested in test/datastores, the whole path in test/e2e/datastores.e2e.test.ts):
// what the model reads, what Temporal retries, and what it must not.
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import {
  createDatastoreActivities,
  type CallDatastoreInput,
  type CallDatastoreOutput,
} from '../../activities/datastores';
import {
  DatastoreConnectionError,
  DatastoreQueryError,
  type QueryResult,
  type SqlDatastore,
} from '../../src/common/datastores/types';
import type { DatastoreAccess } from '../../src/common/datastores/access';
import type { DatastoreRecord } from '../../workflows/datastores';
import type { DatastoreToolDef } from '../../workflows/types';

const ID = `ds_${'a'.repeat(32)}`;
const record: DatastoreRecord = {
  id: ID,
  name: 'shop',
  type: 'postgres',
  allow_sql: true,
  created_at: '2026-01-01T00:00:00Z',
  connection: 'sealed:v1:x',
};
const named: DatastoreToolDef = {
  name: 'city',
  description: 'd',
  parameters: {},
  datastoreId: ID,
  datastoreName: 'shop',
  op: 'named',
  query: 'SELECT city FROM customers WHERE name = $1',
  markers: 1,
};
const own: DatastoreToolDef = { ...named, name: 'query_shop', op: 'sql', query: undefined, markers: undefined };

function harness(query: (sql: string, params: readonly unknown[]) => Promise<QueryResult>) {
  const seen: { sql: string; params: readonly unknown[] }[] = [];
  const source = {
    dialect: 'postgres',
    query: async (sql: string, params: readonly unknown[]) => {
      seen.push({ sql, params });
      return query(sql, params);
    },
  } as unknown as SqlDatastore;
  const access = {
    record: async (_account: string, id: string) => (id === ID ? record : undefined),
    sql: async () => source,
    limits: () => ({ timeoutMs: 5000, maxRows: 200 }),
  } as unknown as DatastoreAccess;
  const publisher = { publish: async () => ({ lastSeq: 1 }) };
  const acts = createDatastoreActivities({ datastores: access, publisher } as never);
  const call = (def: DatastoreToolDef, args: object) =>
    new MockActivityEnvironment().run(acts.callDatastore, {
      taskId: 'task_1',
      session: 's',
      account: 'alice',
      producer: 's1:t0',
      floor: 0,
      def,
      call: { id: 'c1', name: def.name, arguments: JSON.stringify(args) },
      maxChars: 10_000,
    } satisfies CallDatastoreInput) as Promise<CallDatastoreOutput>;
  return { call, seen };
}

const rows = (r: unknown[][], truncated = false): QueryResult => ({
  columns: ['city'],
  rows: r,
  truncated,
  elapsedMs: 2,
});

test('a named query passes its arguments as parameters, never in the text, and reports the bare query time', async () => {
  const { call, seen } = harness(async () => rows([['London']]));
  const out = await call(named, { p1: "Ada' OR 1=1 --" });
  expect(seen).toEqual([{ sql: named.query, params: ["Ada' OR 1=1 --"] }]);
  expect(JSON.parse(out.content)).toEqual({ columns: ['city'], rows: [['London']], row_count: 1, truncated: false });
  expect(out).toMatchObject({ isError: false, queryMs: 2 });
  expect(out.callMs).toBeGreaterThanOrEqual(0);
});

test('bad arguments, a refused statement, a timeout are results the model reads', async () => {
  const { call, seen } = harness(async () => {
    throw new DatastoreQueryError('the query ran past its time limit of 5 s and was cancelled', 'timeout');
  });
  expect((await call(named, {})).content).toBe('Error: missing argument p1');
  expect((await call(named, { p1: { nested: true } })).content).toMatch(/p1 must be a string, number, boolean or null/);
  expect((await call(named, { p1: 'x', extra: 1 })).content).toMatch(/unknown argument: extra/);
  expect((await call(own, { sql: 'DELETE FROM orders' })).content).toMatch(/^Error: DELETE: only a read/);
  expect((await call(own, { sql: 'SELECT 1; SELECT 2' })).content).toMatch(/^Error: .*more than one statement/);
  expect(seen).toEqual([]); // none of these reached the database
  const slow = await call(own, { sql: 'SELECT pg_sleep(10)' });
  expect(slow).toMatchObject({
    isError: true,
    content: 'Error: the query ran past its time limit of 5 s and was cancelled',
  });
});

test('a source that cannot be reached is retried by Temporal; one that refuses the connection is not', async () => {
  const down = harness(async () => {
    throw new DatastoreConnectionError('connect ECONNREFUSED 127.0.0.1:5432', true);
  });
  const retried = await down.call(named, { p1: 'x' }).catch((e: unknown) => e);
  expect(retried).toBeInstanceOf(ApplicationFailure);
  expect(retried).toMatchObject({ type: 'DatastoreConnection', nonRetryable: false });
  const denied = harness(async () => {
    throw new DatastoreConnectionError('password authentication failed for user "agent"', false);
  });
  expect(await denied.call(named, { p1: 'x' }).catch((e: unknown) => e)).toMatchObject({
    type: 'DatastoreUnavailable',
    nonRetryable: true,
  });
});

test("a programming error is not mistaken for the model's problem or a connection error", async () => {
  const { call } = harness(async () => {
    throw new TypeError('cannot read properties of undefined');
  });
  await expect(call(named, { p1: 'x' })).rejects.toThrow(TypeError);
});

test('a datastore deleted since the run bound it is an error result', async () => {
  const { call } = harness(async () => rows([]));
  expect(await call({ ...named, datastoreId: `ds_${'b'.repeat(32)}` }, { p1: 'x' })).toMatchObject({
    isError: true,
    content: 'Error: the datastore shop is no longer registered',
  });
});
