// A run request's datastores and queries bound to an account's registrations:
// the tools the agent gets, and each problem named by its path.
import { bindDatastores } from '../../../src/common/datastores/bindings';
import type { DatastoreRecord } from '../../../workflows/datastores';

const id = (n: number) => `ds_${String(n).padStart(32, '0')}`;
const record = (n: number, type: DatastoreRecord['type'], extra: Partial<DatastoreRecord> = {}): DatastoreRecord => ({
  id: id(n),
  name: `store${n}`,
  type,
  allow_sql: false,
  created_at: '2026-01-01T00:00:00Z',
  ...(type !== 'documents' && { connection: 'sealed:v1:x' }),
  ...extra,
});
const records = [
  record(1, 'postgres', { allow_sql: true, description: 'the shop' }),
  record(2, 'sqlite'),
  record(3, 'documents'),
];

test('each datastore gives its tools: describe and query for SQL (query only with allow_sql), search for documents', () => {
  const { tools, issues } = bindDatastores(records, {
    datastores: [
      { id: id(1), name: 'shop' },
      { id: id(2), name: 'local' },
      { id: id(3), name: 'kb' },
    ],
  });
  expect(issues).toEqual([]);
  expect(tools.map((t) => [t.name, t.op, t.datastoreName])).toEqual([
    ['describe_shop', 'describe', 'shop'],
    ['query_shop', 'sql', 'shop'],
    ['describe_local', 'describe', 'local'],
    ['search_kb', 'search', 'kb'],
  ]);
  expect(tools[0].description).toMatch(/PostgreSQL.*the shop/);
});

test('a named query gets one argument per marker ($n for PostgreSQL, ? for SQLite) and names its datastore', () => {
  const { tools, issues } = bindDatastores(records, {
    datastores: [
      { id: id(1), name: 'shop' },
      { id: id(2), name: 'local' },
    ],
    queries: [
      {
        name: 'orders_of',
        description: 'Orders of a customer since a date',
        query: 'SELECT * FROM orders WHERE customer_id = $1 AND placed_at >= $2',
        datastore: 'shop',
      },
      {
        name: 'city_of',
        description: 'A customer city',
        query: 'SELECT city FROM customers WHERE name = ?',
        datastore: id(2),
      },
      { name: 'by_registered_name', description: 'x', query: 'SELECT 1', datastore: 'store2' },
    ],
  });
  expect(issues).toEqual([]);
  const orders = tools.find((t) => t.name === 'orders_of')!;
  expect(orders).toMatchObject({
    op: 'named',
    markers: 2,
    datastoreId: id(1),
    query: 'SELECT * FROM orders WHERE customer_id = $1 AND placed_at >= $2',
  });
  expect(orders.parameters).toMatchObject({ required: ['p1', 'p2'], additionalProperties: false });
  expect(tools.find((t) => t.name === 'city_of')).toMatchObject({ markers: 1, datastoreId: id(2) });
  expect(tools.find((t) => t.name === 'by_registered_name')).toMatchObject({ markers: 0, datastoreId: id(2) });
});

test('without `datastore` a query runs on the only SQL datastore; with several it must say which', () => {
  const one = bindDatastores(records, {
    datastores: [
      { id: id(1), name: 'shop' },
      { id: id(3), name: 'kb' },
    ],
    queries: [{ name: 'q', description: 'd', query: 'SELECT 1' }],
  });
  expect(one.issues).toEqual([]);
  expect(one.tools.find((t) => t.name === 'q')!.datastoreId).toBe(id(1));
  const two = bindDatastores(records, {
    datastores: [
      { id: id(1), name: 'shop' },
      { id: id(2), name: 'local' },
    ],
    queries: [{ name: 'q', description: 'd', query: 'SELECT 1' }],
  });
  expect(two.issues).toEqual([
    {
      path: 'body.queries[0]',
      message: expect.stringMatching(/query "q": name its datastore/),
      code: 'ambiguous_datastore',
    },
  ]);
});

test('every problem is an issue naming its path', () => {
  const { issues } = bindDatastores(
    records,
    {
      datastores: [
        { id: id(9), name: 'gone' },
        { id: id(1), name: 'bad name!' },
        { id: id(2), name: 'local' },
        { id: id(3), name: 'LOCAL' },
        { id: id(1), name: 'calc' },
      ],
      queries: [
        { name: 'w', description: 'd', query: 'DELETE FROM orders', datastore: 'local' },
        { name: 'two', description: 'd', query: 'SELECT 1; SELECT 2', datastore: 'local' },
        { name: 'kbq', description: 'd', query: 'SELECT 1', datastore: 'gone' },
        { name: 'nowhere', description: 'd', query: 'SELECT 1', datastore: 'nope' },
        { name: 'describe_local', description: 'd', query: 'SELECT 1', datastore: 'local' },
        { name: 'calculate', description: 'd', query: 'SELECT 1', datastore: 'local' },
        { name: 'gap', description: 'd', query: 'SELECT $2', datastore: 'calc' },
      ],
    },
    ['calculate', 'describe_calc'],
  );
  expect(issues.map((i) => [i.path, i.code])).toEqual([
    ['body.datastores[0].id', 'unknown_datastore'],
    ['body.datastores[1].name', 'invalid_name'],
    ['body.datastores[3].name', 'duplicate_name'],
    ['body.datastores[4].name', 'duplicate_name'],
    ['body.queries[0].query', 'invalid_query'],
    ['body.queries[1].query', 'invalid_query'],
    ['body.queries[2].datastore', 'unknown_datastore'],
    ['body.queries[3].datastore', 'unknown_datastore'],
    ['body.queries[4].name', 'duplicate_name'],
    ['body.queries[5].name', 'duplicate_name'],
    ['body.queries[6].query', 'invalid_query'],
  ]);
  expect(issues[4].message).toMatch(/DELETE/);
});

test('a documents datastore runs no queries', () => {
  const { issues } = bindDatastores(records, {
    datastores: [{ id: id(3), name: 'kb' }],
    queries: [{ name: 'q', description: 'd', query: 'SELECT 1', datastore: 'kb' }],
  });
  expect(issues).toEqual([
    { path: 'body.queries[0].datastore', message: expect.stringMatching(/documents datastore/), code: 'not_sql' },
  ]);
});
