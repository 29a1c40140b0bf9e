// client.datastores through the typed client, against the real service:
// register (a knowledge base), upload (examples/shop.db), list, get, delete;
// a knowledge base's documents added as JSON and as text, listed page by page
// and removed; a run naming the upload and a named query; the typed errors.
// One stack for the file.
import fs from 'node:fs';
import path from 'node:path';
import {
  AgentClient,
  BadRequestError,
  ConflictError,
  NotFoundError,
  UnprocessableEntityError,
  type Datastore,
} from '../../client';
import { KEY_A, KEY_B, useStack } from '../e2e/helpers';

jest.setTimeout(90_000);
const ctx = useStack();
const SHOP_DB = path.resolve(__dirname, '../../examples/shop.db');
let agent: AgentClient;
let bob: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
  bob = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_B });
});

const DATASTORE_ID = /^ds_[0-9a-f]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** What the agent's tool said (the scripted model's answer repeats it). */
const toolSaid = (output: string) => JSON.parse(output.replace(/^tool said: /, ''));

let shop: Datastore;
let kb: Datastore;

test('register() a knowledge base and upload() a SQLite file: each answers the datastore, never a path', async () => {
  kb = await agent.datastores.register({ type: 'documents', name: 'handbook', description: 'the staff handbook' });
  expect(kb).toEqual({
    id: expect.stringMatching(DATASTORE_ID),
    name: 'handbook',
    type: 'documents',
    description: 'the staff handbook',
    allow_sql: false,
    query_timeout_ms: expect.any(Number),
    max_rows: expect.any(Number),
    created_at: expect.stringMatching(ISO),
    documents: 0,
  });
  shop = await agent.datastores.upload(fs.readFileSync(SHOP_DB), {
    name: 'shop',
    allow_sql: true,
    description: 'customers, products, orders',
    max_rows: 50,
  });
  expect(shop).toEqual({
    id: expect.stringMatching(DATASTORE_ID),
    name: 'shop',
    type: 'sqlite',
    description: 'customers, products, orders',
    allow_sql: true,
    query_timeout_ms: expect.any(Number),
    max_rows: 50,
    created_at: expect.stringMatching(ISO),
    uploaded: true,
  });
  expect(JSON.stringify(shop)).not.toMatch(/shop\.db|\/datastores\//);
});

test('list() has both, oldest first; get() answers one; delete() removes it, after which it is a NotFoundError', async () => {
  const { datastores } = await agent.datastores.list();
  expect(datastores.map((d) => d.id)).toEqual([kb.id, shop.id]);
  expect(await agent.datastores.get(shop.id)).toEqual(shop);

  const spare = await agent.datastores.register({ type: 'documents', name: 'spare' });
  expect((await agent.datastores.list()).datastores.map((d) => d.name)).toEqual(['handbook', 'shop', 'spare']);
  await expect(agent.datastores.delete(spare.id)).resolves.toBeUndefined();
  await expect(agent.datastores.get(spare.id)).rejects.toBeInstanceOf(NotFoundError);
  await expect(agent.datastores.delete(spare.id)).rejects.toBeInstanceOf(NotFoundError);
  expect((await agent.datastores.list()).datastores.map((d) => d.name)).toEqual(['handbook', 'shop']);
});

test('documents: addDocuments (several, then one as JSON), addText (text and markdown), listDocuments by pages, listAllDocuments, removeDocument', async () => {
  const added = await agent.datastores.addDocuments(kb.id, [
    { id: 'leave', title: 'Leave policy', content: 'Employees get 25 days of paid leave per year.' },
    { id: 'travel', title: 'Travel', content: 'Book trains for trips under four hours.', format: 'markdown' },
  ]);
  expect(added.documents).toEqual([
    { id: 'leave', title: 'Leave policy', format: 'text', chars: 45, created_at: expect.stringMatching(ISO) },
    { id: 'travel', title: 'Travel', format: 'markdown', chars: 39, created_at: expect.stringMatching(ISO) },
  ]);
  const json = await agent.datastores.addDocuments(kb.id, {
    id: 'oncall',
    content: JSON.stringify({ team: 'platform', rota: 'weekly' }),
    format: 'json',
  });
  expect(json.documents).toEqual([expect.objectContaining({ id: 'oncall', title: '', format: 'json' })]);
  const text = await agent.datastores.addText(kb.id, 'Rotate passwords every quarter.', {
    id: 'security',
    title: 'Security',
  });
  expect(text.documents).toEqual([
    expect.objectContaining({ id: 'security', title: 'Security', format: 'text', chars: 31 }),
  ]);
  // Text goes as UTF-8: the service counts the same characters.
  const cafe = '# Café\nThe café opens at 8 — über früh.';
  const md = await agent.datastores.addText(kb.id, cafe, { markdown: true });
  expect(md.documents).toEqual([
    expect.objectContaining({
      id: expect.stringMatching(/^doc_[0-9a-f]{24}$/),
      title: '',
      format: 'markdown',
      chars: [...cafe].length,
    }),
  ]);
  // An existing id is replaced, not added again.
  await agent.datastores.addText(kb.id, 'Employees get 30 days of paid leave per year.', {
    id: 'leave',
    title: 'Leave policy',
  });
  expect((await agent.datastores.get(kb.id)).documents).toBe(5);

  const first = await agent.datastores.listDocuments(kb.id, { limit: 2 });
  expect(first.documents.map((d) => d.id)).toEqual([md.documents[0].id, 'leave']);
  expect(first.next_cursor).toBe('leave');
  const second = await agent.datastores.listDocuments(kb.id, { limit: 2, cursor: first.next_cursor! });
  expect(second.documents.map((d) => d.id)).toEqual(['oncall', 'security']);
  const all: string[] = [];
  for await (const d of agent.datastores.listAllDocuments(kb.id, { limit: 2 })) all.push(d.id);
  expect(all).toEqual([md.documents[0].id, 'leave', 'oncall', 'security', 'travel']);

  const found = await agent.run({
    message: '[[tool name=search_kb args={"query":"paid leave"}]] how much leave?',
    datastores: [{ id: kb.id, name: 'kb' }],
  });
  expect(toolSaid(found.output!).results[0]).toMatchObject({ id: 'leave', snippet: expect.stringContaining('30') });

  await agent.datastores.removeDocument(kb.id, 'leave');
  await expect(agent.datastores.removeDocument(kb.id, 'leave')).rejects.toBeInstanceOf(NotFoundError);
  expect((await agent.datastores.listDocuments(kb.id)).documents.map((d) => d.id)).toEqual([
    md.documents[0].id,
    'oncall',
    'security',
    'travel',
  ]);
});

test("a run with the uploaded datastore: a named query, describe_ and the agent's own SELECT answer from the file", async () => {
  const queries = [
    {
      name: 'customer_city',
      description: 'The city of a customer, by name',
      query: 'SELECT city FROM customers WHERE name = ?',
    },
  ];
  const datastores = [{ id: shop.id, name: 'shop' }];
  const named = await agent.run({
    message: '[[tool name=customer_city args={"p1":"Ada"}]] where?',
    datastores,
    queries,
  });
  expect(named.status).toBe('completed');
  expect(named.output).toContain('London');
  expect(toolSaid(named.output!)).toMatchObject({ columns: ['city'], rows: [['London']], truncated: false });
  // The query names its datastore by the request's name when there are two.
  const both = await agent.run({
    message: '[[tool name=customer_city args={"p1":"Grace"}]] where?',
    datastores: [...datastores, { id: kb.id, name: 'kb' }],
    queries: [{ ...queries[0], datastore: 'shop' }],
  });
  expect(toolSaid(both.output!).rows).toEqual([['Arlington']]);

  const described = await agent.run({ message: '[[tool name=describe_shop]] tables?', datastores });
  expect(toolSaid(described.output!).tables.map((t: { name: string }) => t.name)).toEqual([
    'customers',
    'orders',
    'products',
  ]);
  const own = await agent.run({
    message: '[[tool name=query_shop args={"sql":"SELECT count(*) AS n FROM orders"}]] how many?',
    datastores,
  });
  expect(toolSaid(own.output!).rows).toEqual([[8]]);
});

test("typed errors: a name taken is a ConflictError, an unknown or another account's datastore a NotFoundError, a malformed id a BadRequestError, what cannot be done an UnprocessableEntityError", async () => {
  const taken = await agent.datastores.register({ type: 'documents', name: 'shop' }).catch((e: unknown) => e);
  expect(taken).toBeInstanceOf(ConflictError);
  expect(taken).toMatchObject({ status: 409, type: 'conflict' });
  await expect(agent.datastores.upload(fs.readFileSync(SHOP_DB), { name: 'handbook' })).rejects.toBeInstanceOf(
    ConflictError,
  );

  const unknown = `ds_${'0'.repeat(32)}`;
  const missing = await agent.datastores.get(unknown).catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(NotFoundError);
  expect(missing).toMatchObject({ status: 404, type: 'not_found' });
  await expect(agent.datastores.delete(unknown)).rejects.toBeInstanceOf(NotFoundError);
  await expect(agent.datastores.listDocuments(unknown)).rejects.toBeInstanceOf(NotFoundError);
  await expect(bob.datastores.get(shop.id)).rejects.toBeInstanceOf(NotFoundError);
  await expect(bob.datastores.addText(kb.id, 'not yours')).rejects.toBeInstanceOf(NotFoundError);
  expect((await bob.datastores.list()).datastores).toEqual([]);

  await expect(agent.datastores.get('not-a-datastore')).rejects.toBeInstanceOf(BadRequestError);
  const notSqlite = await agent.datastores
    .upload(Buffer.from('just some text, not a database'), { name: 'junk' })
    .catch((e: unknown) => e);
  expect(notSqlite).toBeInstanceOf(UnprocessableEntityError);
  expect((notSqlite as UnprocessableEntityError).message).toMatch(/not a database/);
  await expect(
    agent.datastores.addDocuments(shop.id, { content: 'a SQL datastore takes no documents' }),
  ).rejects.toBeInstanceOf(UnprocessableEntityError);
  await expect(
    agent.datastores.register({ type: 'sqlite', name: 'outside', path: '/etc/passwd' }),
  ).rejects.toBeInstanceOf(UnprocessableEntityError);
  const run = await agent.run({ message: 'x', datastores: [{ id: unknown, name: 'gone' }] }).catch((e: unknown) => e);
  expect(run).toBeInstanceOf(UnprocessableEntityError);
  expect((run as UnprocessableEntityError).details).toEqual([
    expect.objectContaining({ path: 'body.datastores[0].id', code: 'unknown_datastore' }),
  ]);
  expect((await agent.datastores.list()).datastores.map((d) => d.name)).toEqual(['handbook', 'shop']);

  for (const d of [shop, kb]) await agent.datastores.delete(d.id);
  expect((await agent.datastores.list()).datastores).toEqual([]);
});
