// The worker's datastore access keeps at most DATASTORE_MAX_OPEN sources of each kind open: past
// it the least recently used one is closed, once a query it may still be running has had its time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { DatastoreAccess } from '../../../src/common/datastores/access';
import { DocumentStore } from '../../../src/common/datastores/documents';
import { documentsFile } from '../../../src/common/datastores/files';
import type { SqlDatastore } from '../../../src/common/datastores/types';
import type { DatastoreRecord } from '../../../workflows/datastores';

const TIMEOUT_MS = 200;
let dir: string;
let closed: string[];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-'));
  closed = [];
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A client whose registry of every account answers with no registrations (counting the reads). */
let reads = 0;
const client = {
  workflow: {
    getHandle: () => ({
      query: async () => {
        reads++;
        return [];
      },
    }),
  },
};

function access(maxOpen: number): DatastoreAccess {
  // An opener that only counts: what is under test is which sources stay open, not the drivers.
  const open = async (r: DatastoreRecord) => ({ close: async () => void closed.push(r.id) }) as unknown as SqlDatastore;
  return new DatastoreAccess({
    client: client as never,
    codec: {} as never,
    policy: {} as never,
    logger: pino({ enabled: false }),
    settings: { dir, timeoutMs: TIMEOUT_MS, maxRows: 10, maxOpen },
    open,
  });
}

const record = (id: string, type: DatastoreRecord['type'] = 'postgres'): DatastoreRecord => ({
  id,
  name: id,
  type,
  allow_sql: true,
  created_at: new Date(0).toISOString(),
  ...(type !== 'documents' && { connection: 'sealed' }),
});

test('SQL sources past the bound: the least recently used is closed after its longest query, never more open', async () => {
  const a = access(2);
  await a.sql(record('ds_1'));
  await a.sql(record('ds_2'));
  await a.sql(record('ds_1')); // used again: ds_2 is now the least recently used
  await a.sql(record('ds_3'));
  expect(a.held.sql).toBe(2);
  // ds_2 may still be answering a query: it is closed only once that query's time is up.
  await jest.advanceTimersByTimeAsync(TIMEOUT_MS);
  expect(closed).toEqual([]);
  await jest.advanceTimersByTimeAsync(1000);
  expect(closed).toEqual(['ds_2']);
  for (let i = 4; i < 40; i++) await a.sql(record(`ds_${i}`));
  expect(a.held.sql).toBe(2);
  await jest.advanceTimersByTimeAsync(TIMEOUT_MS + 1000);
  expect(closed).toHaveLength(37);
  expect(closed).not.toContain('ds_39');
});

test('knowledge bases past the bound: the least recently used file is closed, never more open', async () => {
  const a = access(2);
  const ids = ['ds_k1', 'ds_k2', 'ds_k3'];
  for (const id of ids) DocumentStore.open(documentsFile(dir, id)).close();
  const stores = ids.map((id) => a.documents(record(id, 'documents')));
  expect(a.held.documents).toBe(2);
  expect(a.documents(record('ds_k3', 'documents'))).toBe(stores[2]); // kept: the same store
  await jest.advanceTimersByTimeAsync(TIMEOUT_MS + 1000);
  // The first one is closed: a search on it fails; the kept ones answer.
  expect(() => stores[0].search('anything', 1)).toThrow();
  expect(stores[2].search('anything', 1)).toEqual([]);
  await a.close();
});

test('registrations are kept for at most 1,000 accounts, the oldest read going first', async () => {
  const a = access(2);
  for (let i = 0; i < 1500; i++) await a.records(`acct-${i}`);
  expect(a.held.accounts).toBe(1000);
  reads = 0;
  await a.records('acct-1499'); // kept: no read
  await a.records('acct-0'); // put out by the bound: read again
  expect(reads).toBe(1);
});
