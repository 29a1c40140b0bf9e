// Files come as multipart/form-data (the part named file, the fields beside
// it), so the document states an upload's required fields. What is wrong with
// a form is one 400 naming each problem, before any Temporal call; a file sent
// as the whole body, the form this API took before, is a 415 saying how to
// send it now.
import { API_KEY, serveApp, type ServedApp } from './serve-app';

let app: ServedApp;

beforeAll(async () => {
  app = await serveApp();
});
afterAll(() => app.close());

const auth = { authorization: `Bearer ${API_KEY}` };
const DOCS = '/datastores/ds_0123456789abcdef0123456789abcdef/documents';

async function post(
  path: string,
  body: string | Uint8Array | FormData,
  headers: Record<string, string> = {},
): Promise<{ status: number; error: { type: string; message: string; details: { path: string; code: string }[] } }> {
  const r = await fetch(`${app.url}${path}`, { method: 'POST', headers: { ...auth, ...headers }, body });
  return { status: r.status, error: ((await r.json()) as { error: never }).error };
}

function form(fields: Record<string, string>, file?: Blob): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  if (file) f.append('file', file, 'shop.db');
  return f;
}

test('an upload without its file and name is one 400 naming both; a field of the wrong shape is named too', async () => {
  const r = await post('/datastores', form({ allow_sql: 'yes' }));
  expect(r.status).toBe(400);
  expect(r.error.details.map((d) => d.path)).toEqual(['body.file', 'body.name', 'body.allow_sql']);
  expect(r.error.message).toMatch(/^body\.file: required/);
});

test('an unknown field, and a field given twice, are named', async () => {
  const unknown = await post('/datastores', form({ name: 'shop', colour: 'red' }, new Blob(['x'])));
  expect([unknown.status, unknown.error.details]).toEqual([
    400,
    [expect.objectContaining({ path: 'body.colour', code: 'unrecognized_keys' })],
  ]);
  const twice = form({ title: 'a' }, new Blob(['hello']));
  twice.append('title', 'b');
  const dup = await post(DOCS, twice);
  expect([dup.status, dup.error.details]).toEqual([
    400,
    [expect.objectContaining({ path: 'body.title', code: 'duplicate' })],
  ]);
});

test('a body that is not multipart inside, though it says so, is a 400 at body', async () => {
  const r = await post('/datastores', 'no boundaries here', { 'content-type': 'multipart/form-data; boundary=xyz' });
  expect([r.status, r.error.details]).toEqual([
    400,
    [expect.objectContaining({ path: 'body', code: 'malformed_form' })],
  ]);
});

test('a file sent as the whole body is a 415 saying how to send it', async () => {
  const sqlite = await post('/datastores?type=sqlite&name=shop', new Uint8Array([1, 2, 3]), {
    'content-type': 'application/vnd.sqlite3',
  });
  expect(sqlite.status).toBe(415);
  expect(sqlite.error.message).toMatch(/multipart\/form-data: the file as the part named file, and the fields name/);
  const text = await post(DOCS, '# Title', { 'content-type': 'text/markdown' });
  expect(text.status).toBe(415);
  expect(text.error.message).toMatch(/multipart\/form-data: the part named file/);
});
