// The session files API over the gateway's app (in process, a temporary WORKSPACE_DIR, the
// session check stood in for: alice has s1, s2, empty, bob has theirs and shared): upload (created
// and replaced), list, download byte for byte with its headers, delete; paths normalised and
// refused (.., encoded, absolute, NUL, links that lead out), with the rules the document states;
// another account's session a 404; the quota's 413 before and while a body is read, leaving
// nothing; a cut upload leaving nothing; the JSON body parser and its limit not in the way.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { NotFoundError } from '../../src/common/errors';
import type { Account } from '../../src/common/accounts/registry';
import { sessionWorkspace } from '../../src/common/workspaces/layout';
import { SessionFiles } from '../../src/gateway/services/session-files';
import { FILE_PATH, filePathProblem } from '../../src/gateway/schemas/session-files';
import { buildOpenApi } from '../../src/gateway/openapi/document';
import { waitUntil } from '../support/wait-until';
import { API_KEY, API_KEY_B, serveApp, type ServedApp } from './serve-app';

const MiB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-session-files-'));
const workspaces = path.join(dir, 'workspaces');
const outside = path.join(dir, 'outside');
const SESSIONS = new Set(['alice/s1', 'alice/s2', 'alice/empty', 'alice/shared', 'bob/theirs', 'bob/shared']);
const sessions = {
  require: async (account: Account, session: string) => {
    if (!SESSIONS.has(`${account.account}/${session}`)) throw new NotFoundError(`session ${session} not found`);
  },
};
const filesOf = (account: string, session: string) => sessionWorkspace(workspaces, account, session).files;

let app: ServedApp;
beforeAll(async () => {
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'not yours');
  app = await serveApp(
    {
      WORKSPACE_DIR: workspaces,
      WORKSPACE_MAX_BYTES: String(2 * MiB),
      WORKSPACE_MAX_FILES: '12',
      BODY_LIMIT_BYTES: String(64 * 1024),
    },
    (config) => ({ files: new SessionFiles(config, sessions) }),
  );
});
afterAll(async () => {
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: any;
}

/**
 * A request as written, path and all (fetch would resolve `..` in the URL before sending it).
 * `chunks` are sent one by one without a Content-Length.
 */
function send(
  method: string,
  urlPath: string,
  opts: { body?: Buffer | string; chunks?: Buffer[]; key?: string; type?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${opts.key ?? API_KEY}` };
    if (opts.type) headers['content-type'] = opts.type;
    if (opts.chunks) headers['transfer-encoding'] = 'chunked';
    const { hostname, port } = new URL(app.url);
    const req = http.request({ hostname, port, path: urlPath, method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const body = Buffer.concat(parts);
        let json: any;
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
    });
    req.on('error', reject);
    writeAll(req, opts).catch(reject);
  });
}

async function writeAll(req: http.ClientRequest, opts: { body?: Buffer | string; chunks?: Buffer[] }): Promise<void> {
  for (const c of opts.chunks ?? []) {
    if (req.destroyed) return;
    if (!req.write(c)) await new Promise((r) => req.once('drain', r));
  }
  req.end(opts.body);
}

/** A body for a PUT; none for the others (Node's client would send it unframed after a GET's headers). */
const bodyOf = (method: string, body = 'x') => (method === 'PUT' ? { body } : {});

const expectPathRefused = (r: Answer, what: RegExp) => {
  expect([r.status, r.json?.error?.type, r.json?.error?.details?.[0]?.path]).toEqual([
    400,
    'invalid_request',
    'path.path',
  ]);
  expect(r.json.error.message).toMatch(what);
};

/** Every file under the workspace folder of all sessions (temporary files of uploads included). */
const allFiles = (from = workspaces): string[] =>
  fs.existsSync(from)
    ? (fs.readdirSync(from, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(from, f)).isFile())
    : [];

describe('upload, list, download, delete', () => {
  test('an upload is 201 with the file, the same path again 200; the list has both files sorted, with a prefix', async () => {
    const first = await send('PUT', '/sessions/s1/files/notes/todo.txt', { body: 'one', type: 'text/plain' });
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ path: 'notes/todo.txt', size: 3, modified_at: expect.any(String) });
    expect(Date.parse(first.json.modified_at)).not.toBeNaN();
    const again = await send('PUT', '/sessions/s1/files/notes/todo.txt', { body: 'two!', type: 'text/plain' });
    expect([again.status, again.json.size]).toEqual([200, 4]);
    expect((await send('PUT', '/sessions/s1/files/a.md', { body: '# A' })).status).toBe(201);
    const list = await send('GET', '/sessions/s1/files');
    expect(list.json.files.map((f: any) => [f.path, f.size])).toEqual([
      ['a.md', 3],
      ['notes/todo.txt', 4],
    ]);
    const notes = await send('GET', '/sessions/s1/files?prefix=notes/');
    expect(notes.json.files.map((f: any) => f.path)).toEqual(['notes/todo.txt']);
    expect((await send('GET', '/sessions/s1/files?colour=red')).json.error.details[0].path).toBe('query.colour');
  });

  test('a download is the bytes as uploaded, with its type, length, disposition and nosniff', async () => {
    const bytes = randomBytes(300 * 1024);
    expect((await send('PUT', '/sessions/s1/files/data/blob.bin', { body: bytes })).status).toBe(201);
    const got = await send('GET', '/sessions/s1/files/data/blob.bin');
    expect(got.status).toBe(200);
    expect(got.body.equals(bytes)).toBe(true);
    expect(got.headers).toMatchObject({
      'content-type': 'application/octet-stream',
      'content-length': String(bytes.length),
      'content-disposition': `attachment; filename="blob.bin"; filename*=UTF-8''blob.bin`,
      'x-content-type-options': 'nosniff',
    });
    await send('PUT', '/sessions/s1/files/pic.PNG', { body: bytes.subarray(0, 10) });
    expect((await send('GET', '/sessions/s1/files/pic.PNG')).headers['content-type']).toBe('image/png');
    const name = encodeURIComponent('résumé "final" (2).txt');
    expect((await send('PUT', `/sessions/s1/files/${name}`, { body: 'cv' })).status).toBe(201);
    const text = await send('GET', `/sessions/s1/files/${name}`);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.headers['content-disposition']).toBe(
      `attachment; filename="r_sum_ _final_ (2).txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22%20%282%29.txt`,
    );
    expect((await send('PUT', '/sessions/s1/files/empty.txt', { body: '' })).json.size).toBe(0);
    const empty = await send('GET', '/sessions/s1/files/empty.txt');
    expect([empty.status, empty.headers['content-length'], empty.body.length]).toEqual([200, '0', 0]);
  });

  test('a delete is 204, then the file is gone (404 to read or delete); a folder is no file', async () => {
    await send('PUT', '/sessions/s2/files/dir/gone.txt', { body: 'x' });
    expect((await send('DELETE', '/sessions/s2/files/dir/gone.txt')).status).toBe(204);
    for (const method of ['GET', 'DELETE']) {
      const r = await send(method, '/sessions/s2/files/dir/gone.txt');
      expect([r.status, r.json.error.type, r.json.error.message]).toEqual([
        404,
        'not_found',
        'no file "dir/gone.txt" in the workspace',
      ]);
    }
    for (const method of ['GET', 'DELETE'])
      expect((await send(method, '/sessions/s2/files/dir')).json.error.message).toBe('"dir" is a folder, not a file');
    expect((await send('GET', '/sessions/s2/files/never/was.txt')).status).toBe(404);
  });

  test('a folder where the file goes, or a file where its folder goes, is a 409 and changes nothing', async () => {
    await send('PUT', '/sessions/s2/files/tree/leaf.txt', { body: 'leaf' });
    const onFolder = await send('PUT', '/sessions/s2/files/tree', { body: 'x' });
    expect([onFolder.status, onFolder.json.error.type]).toEqual([409, 'conflict']);
    const underFile = await send('PUT', '/sessions/s2/files/tree/leaf.txt/inner', { body: 'x' });
    expect([underFile.status, underFile.json.error.details]).toEqual([409, { path: 'tree/leaf.txt/inner' }]);
    expect((await send('GET', '/sessions/s2/files/tree/leaf.txt')).body.toString()).toBe('leaf');
  });

  test('the body is never parsed, whatever its type, and BODY_LIMIT_BYTES (64 KiB here) does not bound it', async () => {
    const json = JSON.stringify({ rows: 'x'.repeat(200 * 1024) });
    const r = await send('PUT', '/sessions/s2/files/big.json', { body: json, type: 'application/json' });
    expect([r.status, r.json.size]).toEqual([201, Buffer.byteLength(json)]);
    const got = await send('GET', '/sessions/s2/files/big.json');
    expect(got.body.toString()).toBe(json);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    const form = await send('PUT', '/sessions/s2/files/form.txt', {
      body: 'a=1',
      type: 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(201);
    expect((await send('GET', '/sessions/s2/files/form.txt')).body.toString()).toBe('a=1');
  });

  test('a session with no workspace yet lists no files; OPTIONS names the methods of a file', async () => {
    expect(fs.existsSync(filesOf('alice', 'empty'))).toBe(false);
    expect((await send('GET', '/sessions/empty/files')).json).toEqual({ files: [] });
    const options = await send('OPTIONS', '/sessions/empty/files/x.txt');
    expect([options.status, options.headers.allow]).toEqual([204, 'DELETE, GET, PUT']);
  });

  test('a method a file does not take is a 405 naming those it does, whatever the body (not the JSON-only 415)', async () => {
    for (const type of ['application/octet-stream', 'application/json']) {
      const r = await send('POST', '/sessions/s1/files/x.bin', { body: '{}', type });
      expect([type, r.status, r.headers.allow, r.json.error.type]).toEqual([
        type,
        405,
        'DELETE, GET, PUT',
        'method_not_allowed',
      ]);
    }
  });
});

describe('paths', () => {
  test('are normalised: . and empty segments dropped, %2F a folder, decoded once', async () => {
    const r = await send('PUT', '/sessions/s2/files/./norm//deep%2Fer/./f.txt', { body: 'n' });
    expect([r.status, r.json.path]).toEqual([201, 'norm/deep/er/f.txt']);
    expect(fs.readFileSync(path.join(filesOf('alice', 's2'), 'norm/deep/er/f.txt'), 'utf8')).toBe('n');
    const literal = await send('PUT', '/sessions/s2/files/100%252e.txt', { body: 'p' });
    expect(literal.json.path).toBe('100%2e.txt');
  });

  test.each([
    ['..', '/sessions/s1/files/..', /\.\. segment/],
    ['.. encoded', '/sessions/s1/files/%2e%2e', /\.\. segment/],
    ['.. under a folder', '/sessions/s1/files/a/../../x', /\.\. segment/],
    ['.. behind an encoded slash', '/sessions/s1/files/..%2F..%2Fetc%2Fpasswd', /\.\. segment/],
    ['.. behind a backslash', '/sessions/s1/files/..%5Cx', /\.\. segment/],
    ['an absolute path', '/sessions/s1/files/%2Fetc%2Fpasswd', /absolute/],
    ['an absolute path, slashes doubled', '/sessions/s1/files//etc/passwd', /absolute/],
    ['a NUL', '/sessions/s1/files/a%00b', /control character/],
    ['a newline', '/sessions/s1/files/a%0Ab', /control character/],
    ['the workspace itself', '/sessions/s1/files/.', /names the workspace itself/],
    ['a path past 1024 characters', `/sessions/s1/files/${'a/'.repeat(600)}`, /longer than 1024/],
  ])('%s is a 400 at path.path, for every method', async (_what, urlPath, why) => {
    for (const method of ['PUT', 'GET', 'DELETE']) expectPathRefused(await send(method, urlPath, bodyOf(method)), why);
    expect(allFiles(outside)).toEqual(['secret.txt']);
  });

  test('a malformed percent-encoding is a 400 at path (Express cannot decode it)', async () => {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const r = await send(method, '/sessions/s1/files/a%zzb', bodyOf(method));
      expect([r.status, r.json.error.details]).toEqual([
        400,
        [
          {
            path: 'path',
            message: 'malformed percent-encoding in "a%zzb": % is followed by two hex digits of UTF-8',
            code: 'malformed_path',
          },
        ],
      ]);
    }
  });

  test('a link in the workspace that leads out is a 400; one that stays inside is followed', async () => {
    const files = filesOf('alice', 's2');
    fs.mkdirSync(files, { recursive: true });
    fs.symlinkSync(outside, path.join(files, 'out-dir'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(files, 'leak.txt'));
    for (const [method, name] of [
      ['GET', 'leak.txt'],
      ['DELETE', 'leak.txt'],
      ['PUT', 'leak.txt'],
      ['GET', 'out-dir/secret.txt'],
      ['PUT', 'out-dir/planted.txt'],
      ['DELETE', 'out-dir/secret.txt'],
    ])
      expectPathRefused(await send(method, `/sessions/s2/files/${name}`, bodyOf(method)), /link that leads out/);
    expect(allFiles(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('not yours');
    await send('PUT', '/sessions/s2/files/real.txt', { body: 'inside' });
    fs.symlinkSync('real.txt', path.join(files, 'alias.txt'));
    expect((await send('GET', '/sessions/s2/files/alias.txt')).body.toString()).toBe('inside');
  });

  test("the workspace's state folder is out of reach", async () => {
    const { state } = sessionWorkspace(workspaces, 'alice', 's1');
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(path.join(state, 'shell.json'), '{}');
    expect((await send('GET', '/sessions/s1/files')).json.files.map((f: any) => f.path)).not.toContain('shell.json');
    expectPathRefused(await send('GET', '/sessions/s1/files/..%2Fstate%2Fshell.json'), /\.\. segment/);
  });

  test('the pattern the document states for a path allows exactly what the route takes as well-formed', () => {
    const param = (buildOpenApi() as any).components.parameters.FilePath.schema;
    const fits = new Ajv2020({ strict: false }).compile(param);
    const cases = [
      'a.txt',
      'dir/sub/file.py',
      '.hidden',
      '..a',
      'a..',
      '...',
      'a/./b',
      'a//b',
      'a\\b',
      'é/ü.md',
      ' space ',
      'a/\u2028/..',
      '..',
      '../x',
      'a/../b',
      'a/..',
      'a\\..\\b',
      '/abs',
      '\\abs',
      '.',
      './',
      '/',
      '',
      'a\u0000b',
      'a\nb',
      'tab\there',
      'x'.repeat(1024),
      'x'.repeat(1025),
      '😀'.repeat(1024),
      '😀'.repeat(1025),
    ];
    for (const p of cases) {
      const wellFormed = filePathProblem(p) === undefined;
      expect([p, fits(p), FILE_PATH.test(p) && [...p].length <= 1024 && p.length > 0]).toEqual([
        p,
        wellFormed,
        wellFormed,
      ]);
    }
  });
});

describe('accounts', () => {
  test("another account's session is a 404, for every route, as an unknown one is", async () => {
    await send('PUT', '/sessions/theirs/files/private.txt', { body: 'bob', key: API_KEY_B });
    for (const [method, urlPath] of [
      ['GET', '/sessions/theirs/files'],
      ['GET', '/sessions/theirs/files/private.txt'],
      ['PUT', '/sessions/theirs/files/private.txt'],
      ['DELETE', '/sessions/theirs/files/private.txt'],
      ['GET', '/sessions/nobodys/files'],
    ]) {
      const r = await send(method, urlPath, bodyOf(method, 'alice'));
      expect([method, urlPath, r.status, r.json.error.message]).toEqual([
        method,
        urlPath,
        404,
        `session ${urlPath.split('/')[2]} not found`,
      ]);
    }
    const bobs = await send('GET', '/sessions/theirs/files/private.txt', { key: API_KEY_B });
    expect(bobs.body.toString()).toBe('bob');
  });

  test('two accounts with a session of the same id have a workspace each', async () => {
    await send('PUT', '/sessions/shared/files/who.txt', { body: 'bob', key: API_KEY_B });
    expect((await send('GET', '/sessions/shared/files')).json).toEqual({ files: [] });
    expect((await send('GET', '/sessions/shared/files/who.txt')).status).toBe(404);
  });

  test('a malformed session id is a 400 at path.id', async () => {
    const r = await send('GET', '/sessions/has%20space/files/a.txt');
    expect([r.status, r.json.error.details[0].path]).toEqual([400, 'path.id']);
  });
});

describe('the quota (2 MiB, 12 files here)', () => {
  const quotaSession = async () => {
    // Each test starts from an empty workspace: the files of alice's "empty" session are cleared.
    fs.rmSync(sessionWorkspace(workspaces, 'alice', 'empty').root, { recursive: true, force: true });
    return '/sessions/empty/files';
  };

  test('a Content-Length past the room left is a 413 before anything is written', async () => {
    const base = await quotaSession();
    expect((await send('PUT', `${base}/a.bin`, { body: Buffer.alloc(MiB + 512 * 1024) })).status).toBe(201);
    const r = await send('PUT', `${base}/b.bin`, { body: Buffer.alloc(MiB) });
    expect(r.status).toBe(413);
    expect(r.json.error).toEqual({
      type: 'payload_too_large',
      message:
        'the upload (1 MiB) would take the workspace past its limit of 2 MiB (WORKSPACE_MAX_BYTES): its other files hold 1.5 MiB',
      details: { quota: 'bytes', limit: 2 * MiB, used: 1.5 * MiB },
    });
    expect(allFiles(sessionWorkspace(workspaces, 'alice', 'empty').files)).toEqual(['a.bin']);
    // Replacing a file makes room of its own size.
    expect((await send('PUT', `${base}/a.bin`, { body: Buffer.alloc(2 * MiB) })).status).toBe(200);
  });

  test('a chunked body that grows past the room is a 413 as soon as it does; no file, no temporary file stays', async () => {
    const base = await quotaSession();
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(256 * 1024, 1)); // 10 MiB
    const r = await send('PUT', `${base}/stream.bin`, { chunks });
    expect([r.status, r.json.error.details]).toEqual([413, { quota: 'bytes', limit: 2 * MiB, used: 0 }]);
    expect(r.json.error.message).toMatch(/^the upload \(more than 2 MiB\) would take the workspace past its limit/);
    expect(allFiles(sessionWorkspace(workspaces, 'alice', 'empty').root)).toEqual([]);
  });

  test('one file more than WORKSPACE_MAX_FILES is a 413; replacing one of them is not', async () => {
    const base = await quotaSession();
    for (let i = 0; i < 12; i++) expect((await send('PUT', `${base}/f${i}.txt`, { body: 'x' })).status).toBe(201);
    const r = await send('PUT', `${base}/one-more.txt`, { body: 'x' });
    expect([r.status, r.json.error.details]).toEqual([413, { quota: 'files', limit: 12, used: 12 }]);
    expect((await send('PUT', `${base}/f0.txt`, { body: 'y' })).status).toBe(200);
  });
});

test('an upload cut before its end leaves nothing: no file, no temporary file', async () => {
  const files = filesOf('alice', 's1');
  const cutOnes = () => allFiles(files).filter((f) => f.includes('cut.bin'));
  const req = http.request(`${app.url}/sessions/s1/files/cut.bin`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-length': String(MiB) },
  });
  req.on('error', () => undefined); // the client cuts it
  req.write(Buffer.alloc(64 * 1024, 7));
  const [temp] = await waitUntil('the upload under way, in its temporary file', cutOnes, (f) => f.length === 1, {
    timeoutMs: 5000,
  });
  expect(temp).toMatch(/^\.cut\.bin\.[0-9a-f]{12}\.upload$/);
  req.destroy();
  await waitUntil('the temporary file removed', cutOnes, (f) => f.length === 0, { timeoutMs: 5000 });
  expect((await send('GET', '/sessions/s1/files/cut.bin')).status).toBe(404);
});
