// The session files API against the real stack (a 2 MiB workspace quota, the workspaces in a
// folder of the test's own): a binary file uploaded, listed, downloaded byte for byte and deleted;
// paths that lead out (.., %2e%2e, %2F, absolute, a link planted in the workspace folder) refused
// with a 400 and nothing touched outside; another account's session a 404 as an unknown one is;
// the quota's 413 leaving nothing; and deleting the session deleting its workspace.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { AgentClient, NotFoundError } from '../../client';
import { sessionWorkspace } from '../../src/common/workspaces/layout';
import { KEY_A, KEY_B, useStack } from './helpers';

jest.setTimeout(90_000);
const MiB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-files-e2e-'));
const workspaces = path.join(dir, 'workspaces');
const outside = path.join(dir, 'outside');
const ctx = useStack({ WORKSPACE_DIR: workspaces, WORKSPACE_MAX_BYTES: String(2 * MiB) });

let alice: AgentClient;
let bob: AgentClient;
beforeAll(() => {
  alice = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
  bob = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_B });
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'not yours');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const newSession = async (client = alice) =>
  (await client.sessions.create({ session: `files-${randomUUID().slice(0, 8)}` })).session;

/** A request with its path exactly as written (fetch would resolve `..` and `%2e%2e` before sending). */
function rawRequest(method: string, urlPath: string, body?: string): Promise<{ status: number; json: any }> {
  const { hostname, port } = new URL(ctx.stack().gatewayUrl);
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${KEY_A}`, ...(body !== undefined && { 'content-length': body.length }) };
    const req = http.request({ hostname, port, path: urlPath, method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a binary file uploaded, listed, downloaded byte for byte, replaced, deleted', async () => {
  const session = await newSession();
  expect(await alice.sessions.files.list(session)).toEqual({ files: [] });
  const bytes = randomBytes(512 * 1024);
  const up = await alice.sessions.files.upload(session, 'data/blob.bin', bytes);
  expect(up).toEqual({ path: 'data/blob.bin', size: bytes.length, modified_at: expect.any(String) });
  await alice.sessions.files.upload(session, 'readme.md', '# hi');
  expect((await alice.sessions.files.list(session)).files.map((f) => [f.path, f.size])).toEqual([
    ['data/blob.bin', bytes.length],
    ['readme.md', 4],
  ]);
  expect((await alice.sessions.files.list(session, { prefix: 'data/' })).files).toHaveLength(1);
  expect((await alice.sessions.files.download(session, 'data/blob.bin')).equals(bytes)).toBe(true);
  const res = await fetch(`${ctx.stack().gatewayUrl}/sessions/${session}/files/readme.md`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  expect([res.status, await res.text()]).toEqual([200, '# hi']);
  expect(Object.fromEntries(res.headers)).toMatchObject({
    'content-type': 'text/markdown; charset=utf-8',
    'content-length': '4',
    'content-disposition': `attachment; filename="readme.md"; filename*=UTF-8''readme.md`,
    'x-content-type-options': 'nosniff',
  });
  // On the storage the worker's tools see: the workspace's files folder.
  const files = sessionWorkspace(workspaces, 'alice', session).files;
  expect(fs.readFileSync(path.join(files, 'data/blob.bin')).equals(bytes)).toBe(true);
  expect((await alice.sessions.files.upload(session, 'readme.md', '# again')).size).toBe(7);
  await alice.sessions.files.delete(session, 'data/blob.bin');
  await expect(alice.sessions.files.download(session, 'data/blob.bin')).rejects.toBeInstanceOf(NotFoundError);
  expect((await alice.sessions.files.list(session)).files.map((f) => f.path)).toEqual(['readme.md']);
});

test('paths that lead out of the workspace are a 400 naming path.path, and nothing outside is touched', async () => {
  const session = await newSession();
  await alice.sessions.files.upload(session, 'inside.txt', 'in');
  const files = sessionWorkspace(workspaces, 'alice', session).files;
  fs.symlinkSync(outside, path.join(files, 'escape'));
  const attempts = [
    ['GET', '..'],
    ['GET', '%2e%2e'],
    ['GET', '..%2F..%2F..%2Fetc%2Fpasswd'],
    ['GET', 'a/%2e%2e/%2e%2e/x'],
    ['GET', '%2Fetc%2Fpasswd'],
    ['GET', 'escape/secret.txt'],
    ['PUT', 'escape/planted.txt'],
    ['PUT', '..%2F..%2Fplanted.txt'],
    ['DELETE', 'escape/secret.txt'],
    ['DELETE', '%2e%2e%2Fstate'],
  ];
  for (const [method, p] of attempts) {
    const r = await rawRequest(method, `/sessions/${session}/files/${p}`, method === 'PUT' ? 'x' : undefined);
    expect([method, p, r.status, r.json.error.details[0].path]).toEqual([method, p, 400, 'path.path']);
  }
  expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
  expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('not yours');
  const everywhere = fs.readdirSync(dir, { recursive: true }) as string[];
  expect(everywhere.filter((f) => f.includes('planted'))).toEqual([]);
  expect((await alice.sessions.files.download(session, 'inside.txt')).toString()).toBe('in');
});

test("another account's session is a 404 on every files route, as an unknown session is", async () => {
  const theirs = await newSession(bob);
  await bob.sessions.files.upload(theirs, 'private.txt', 'bob');
  const attempts: [string, () => Promise<unknown>][] = [
    ['list', () => alice.sessions.files.list(theirs)],
    ['download', () => alice.sessions.files.download(theirs, 'private.txt')],
    ['upload', () => alice.sessions.files.upload(theirs, 'private.txt', 'alice')],
    ['delete', () => alice.sessions.files.delete(theirs, 'private.txt')],
    ['unknown', () => alice.sessions.files.list(`nobody-${randomUUID().slice(0, 8)}`)],
  ];
  for (const [what, call] of attempts) {
    const err = await call().catch((e: unknown) => e);
    expect([what, err instanceof NotFoundError, (err as Error).message]).toEqual([
      what,
      true,
      expect.stringMatching(/^session \S+ not found$/),
    ]);
  }
  expect((await bob.sessions.files.download(theirs, 'private.txt')).toString()).toBe('bob');
});

test('an upload past WORKSPACE_MAX_BYTES is a 413 and leaves nothing; the files within it stay', async () => {
  const session = await newSession();
  await alice.sessions.files.upload(session, 'half.bin', Buffer.alloc(MiB));
  const err = await alice.sessions.files.upload(session, 'more.bin', Buffer.alloc(MiB + 1)).catch((e: unknown) => e);
  expect([(err as any).status, (err as any).type, (err as any).details]).toEqual([
    413,
    'payload_too_large',
    { quota: 'bytes', limit: 2 * MiB, used: MiB },
  ]);
  expect((await alice.sessions.files.list(session)).files.map((f) => f.path)).toEqual(['half.bin']);
  expect(fs.readdirSync(sessionWorkspace(workspaces, 'alice', session).files)).toEqual(['half.bin']);
});

test('deleting the session deletes its workspace; a session created again with its id starts with no files', async () => {
  const session = await newSession();
  await alice.sessions.files.upload(session, 'keep/me.txt', 'x');
  const { root } = sessionWorkspace(workspaces, 'alice', session);
  expect(fs.existsSync(root)).toBe(true);
  await alice.sessions.delete(session);
  expect(fs.existsSync(root)).toBe(false);
  await expect(alice.sessions.files.list(session)).rejects.toBeInstanceOf(NotFoundError);
  await alice.sessions.create({ session });
  expect(await alice.sessions.files.list(session)).toEqual({ files: [] });
});
