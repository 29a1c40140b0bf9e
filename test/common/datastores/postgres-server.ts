// A real PostgreSQL (Debian's package) on a free port for one test file, seeded
// with a small shop. The datastore's guarantees (read-only, timeouts, one
// statement) are the server's to enforce, so only a real server can prove them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../../src/dev/launcher/processes';
import {
  postgresLogTail,
  postgresPid,
  startPostgresServer,
  stopPostgresServer,
} from '../../../src/dev/postgres-server';

export interface TestPostgres {
  /** The `agent` role: password auth, may read and (outside a read-only transaction) write the shop. */
  url: string;
  /** The superuser, trusted on loopback. */
  adminUrl: string;
  port: number;
  password: string;
  stop(): Promise<void>;
}

const HBA = [
  'local all all trust',
  'host all postgres 127.0.0.1/32 trust',
  // The role under test must authenticate as a real deployment would, so a wrong password fails.
  'host all all 127.0.0.1/32 scram-sha-256',
];

// The database is owned by the superuser: the agent's rights are only the grants below.
const seedSql = (password: string) => [`CREATE ROLE agent LOGIN PASSWORD '${password}'`, 'CREATE DATABASE shop'];

const SHOP_SQL = `
CREATE TABLE customers(id serial PRIMARY KEY, name text NOT NULL, city text, created_at timestamptz DEFAULT now());
INSERT INTO customers(name, city, created_at) VALUES
  ('Ada', 'London', '2024-01-15 09:30:00+00'), ('Grace', 'New York', '2024-02-01 12:00:00+00'),
  ('Linus', 'Helsinki', '2024-03-10 08:15:00+00'), ('Margaret', 'Boston', '2024-04-22 17:45:00+00'), ('Alan', NULL, '2024-05-05 10:00:00+00');
CREATE TABLE orders(id serial PRIMARY KEY, customer_id int REFERENCES customers, total numeric(10,2), placed_at date);
INSERT INTO orders(customer_id, total, placed_at) VALUES
  (1, 120.50, '2024-06-01'), (1, 35.00, '2024-06-03'), (2, 999.99, '2024-06-04'), (3, 12.25, '2024-06-05'),
  (3, 80.00, '2024-06-07'), (4, 45.10, '2024-06-09'), (5, 300.00, '2024-06-10'), (2, 7.75, '2024-06-12');
CREATE SCHEMA sales;
CREATE TABLE sales.targets(region text PRIMARY KEY, amount numeric(12,2) NOT NULL);
INSERT INTO sales.targets VALUES ('north', 10000.00), ('south', 7500.00);
CREATE TABLE numbers(n int);
INSERT INTO numbers SELECT generate_series(1, 1000);
-- Every write right, CREATE included: only the read-only transaction may be what refuses a write.
GRANT CREATE, USAGE ON SCHEMA public, sales TO agent;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, sales TO agent;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO agent;
`;

async function admin(url: string, statements: string[]): Promise<pg.QueryResult[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const results: pg.QueryResult[] = [];
    for (const s of statements) results.push(await client.query(s));
    return results;
  } finally {
    await client.end();
  }
}

/** One statement as the server's owner (a session of its own): what tests check the data and the server with. */
export async function adminQuery(server: Pick<TestPostgres, 'adminUrl'>, sql: string): Promise<pg.QueryResult> {
  const [result] = await admin(server.adminUrl, [sql]);
  return result;
}

export async function startPostgres(): Promise<TestPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-test-'));
  const port = await freePort();
  const password = crypto.randomBytes(12).toString('hex');
  let started = false;
  // Jest may end a worker without afterAll: the server is pg_ctl's daemon, not our child, so nothing else would stop it.
  const onExit = () => {
    const pid = started ? postgresPid(dir) : undefined;
    if (pid) process.kill(pid, 'SIGQUIT'); // immediate shutdown
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const stop = async () => {
    process.removeListener('exit', onExit);
    if (started) {
      started = false;
      stopPostgresServer(dir);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    startPostgresServer({ dir, port, hba: HBA, settings: { fsync: 'off' } });
    started = true;
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/shop`;
    await admin(`postgres://postgres@127.0.0.1:${port}/postgres`, seedSql(password));
    await admin(adminUrl, [SHOP_SQL]);
    return { url: `postgres://agent:${password}@127.0.0.1:${port}/shop`, adminUrl, port, password, stop };
  } catch (err) {
    const log = postgresLogTail(dir);
    await stop();
    throw new Error(`${(err as Error).message}${log ? `\nserver log:\n${log}` : ''}`);
  }
}
