// client.sessions.files and `agent files` against the gateway's app in this process (a temporary
// WORKSPACE_DIR, the session check stood in for: alice has s1 and s2, bob has b1): every method
// and command, a file byte for byte both ways, paths that the URL parser would otherwise resolve
// away, typed errors (404, 413, 400), and the CLI's usage errors, one line and exit 2. The CLI runs
// in process (main() with an Output of its own); test/client/cli*.e2e.test.ts run it as a child.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AgentClient, BadRequestError, NotFoundError, PayloadTooLargeError } from '../../client';
import { main } from '../../client/cli/main';
import { Output, type Stream } from '../../client/cli/output';
import { NotFoundError as ServiceNotFound } from '../../src/common/errors';
import type { Account } from '../../src/common/accounts/registry';
import { SessionFiles } from '../../src/gateway/services/session-files';
import { API_KEY, API_KEY_B, serveApp, type ServedApp } from '../gateway/serve-app';

const MiB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-client-files-'));
const local = (name: string) => path.join(dir, 'local', name);
const SESSIONS = new Set(['alice/s1', 'alice/s2', 'bob/b1']);
const sessions = {
  require: async (account: Account, session: string) => {
    if (!SESSIONS.has(`${account.account}/${session}`)) throw new ServiceNotFound(`session ${session} not found`);
  },
};

let app: ServedApp;
let agent: AgentClient;
beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'local'));
  app = await serveApp({ WORKSPACE_DIR: path.join(dir, 'workspaces'), WORKSPACE_MAX_BYTES: String(MiB) }, (config) => ({
    files: new SessionFiles(config, sessions),
  }));
  agent = new AgentClient({ baseUrl: app.url, apiKey: API_KEY });
});
afterAll(async () => {
  await app.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('client.sessions.files', () => {
  test('upload (bytes, a Uint8Array, a string), list (all, by prefix), download byte for byte, delete', async () => {
    const bytes = randomBytes(100 * 1024);
    expect(await agent.sessions.files.upload('s1', 'bin/data.bin', bytes)).toEqual({
      path: 'bin/data.bin',
      size: bytes.length,
      modified_at: expect.any(String),
    });
    await agent.sessions.files.upload('s1', 'u8.bin', new Uint8Array([0, 1, 2, 255]));
    await agent.sessions.files.upload('s1', 'notes/ünï cödé #1?.md', '# héllo');
    const all = await agent.sessions.files.list('s1');
    expect(all.files.map((f) => [f.path, f.size])).toEqual([
      ['bin/data.bin', bytes.length],
      ['notes/ünï cödé #1?.md', Buffer.byteLength('# héllo')],
      ['u8.bin', 4],
    ]);
    expect((await agent.sessions.files.list('s1', { prefix: 'notes/' })).files.map((f) => f.path)).toEqual([
      'notes/ünï cödé #1?.md',
    ]);
    const back = await agent.sessions.files.download('s1', 'bin/data.bin');
    expect(Buffer.isBuffer(back) && back.equals(bytes)).toBe(true);
    expect([...(await agent.sessions.files.download('s1', 'u8.bin'))]).toEqual([0, 1, 2, 255]);
    expect((await agent.sessions.files.download('s1', 'notes/ünï cödé #1?.md')).toString()).toBe('# héllo');
    await agent.sessions.files.delete('s1', 'u8.bin');
    await expect(agent.sessions.files.download('s1', 'u8.bin')).rejects.toBeInstanceOf(NotFoundError);
    await expect(agent.sessions.files.delete('s1', 'u8.bin')).rejects.toBeInstanceOf(NotFoundError);
  });

  test('paths with dots reach the service as given (the URL parser resolves none of them), and are refused there', async () => {
    for (const p of ['..', '.', '../x', 'a/../../x', 'a/./..']) {
      const err = await agent.sessions.files.download('s1', p).catch((e: unknown) => e);
      expect([p, err instanceof BadRequestError, (err as BadRequestError).details]).toEqual([
        p,
        true,
        [expect.objectContaining({ path: 'path.path', code: 'invalid_path' })],
      ]);
    }
    expect((await agent.sessions.files.upload('s1', './dotted/./x.txt', 'x')).path).toBe('dotted/x.txt');
  });

  test('typed errors: a PayloadTooLargeError past the quota (with its details), a NotFoundError for another account', async () => {
    const err = await agent.sessions.files.upload('s2', 'huge.bin', Buffer.alloc(MiB + 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect([(err as PayloadTooLargeError).status, (err as PayloadTooLargeError).details]).toEqual([
      413,
      { quota: 'bytes', limit: MiB, used: 0 },
    ]);
    const bob = new AgentClient({ baseUrl: app.url, apiKey: API_KEY_B });
    await bob.sessions.files.upload('b1', 'mine.txt', 'bob');
    await expect(agent.sessions.files.list('b1')).rejects.toBeInstanceOf(NotFoundError);
    await expect(agent.sessions.files.download('b1', 'mine.txt')).rejects.toBeInstanceOf(NotFoundError);
  });
});

/** `agent <args>` in this process: its exit code, and what it wrote on stdout (text and bytes) and stderr. */
async function cli(args: string[]): Promise<{ code: number; stdout: Buffer; text: string; stderr: string }> {
  const out: Buffer[] = [];
  let stderr = '';
  const stdout: Stream = { write: (s: string | Uint8Array) => out.push(Buffer.from(s)) };
  const err: Stream = { write: (s: string | Uint8Array) => (stderr += String(s)) };
  const code = await main(args, new Output(stdout, err, {}), { AGENT_URL: app.url, AGENT_API_KEY: API_KEY });
  const bytes = Buffer.concat(out);
  return { code, stdout: bytes, text: bytes.toString('utf8'), stderr };
}

describe('agent files', () => {
  test('upload (its name, or a path given), list as a table or JSON, by prefix; no files said on stderr', async () => {
    expect(await cli(['files', 'list', 's2'])).toMatchObject({ code: 0, text: '', stderr: 'no files\n' });
    fs.writeFileSync(local('report.csv'), 'a,b\n1,2\n');
    expect(await cli(['files', 'upload', 's2', local('report.csv')])).toMatchObject({
      code: 0,
      text: 'uploaded: report.csv (8 bytes)\n',
    });
    expect((await cli(['files', 'upload', 's2', local('report.csv'), 'data/2024/r.csv'])).text).toBe(
      'uploaded: data/2024/r.csv (8 bytes)\n',
    );
    const table = await cli(['files', 'list', 's2']);
    const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';
    expect(table.text).toMatch(
      new RegExp(
        `^SIZE  MODIFIED \\(UTC\\)\\s+PATH\\n8     ${TIME}  data/2024/r\\.csv\\n8     ${TIME}  report\\.csv\\n$`,
      ),
    );
    const json = await cli(['files', 'list', 's2', '--prefix', 'data/', '--json']);
    expect(JSON.parse(json.text).files.map((f: { path: string }) => f.path)).toEqual(['data/2024/r.csv']);
  });

  test('download to a file (byte for byte), to its own name, to stdout with -; delete', async () => {
    const bytes = randomBytes(64 * 1024);
    await agent.sessions.files.upload('s2', 'img/photo.png', bytes);
    expect((await cli(['files', 'download', 's2', 'img/photo.png', local('copy.png')])).text).toBe(
      `saved: ${local('copy.png')} (${bytes.length} bytes)\n`,
    );
    expect(fs.readFileSync(local('copy.png')).equals(bytes)).toBe(true);
    const toStdout = await cli(['files', 'download', 's2', 'img/photo.png', '-']);
    expect([toStdout.code, toStdout.stdout.equals(bytes), toStdout.stderr]).toEqual([0, true, '']);
    const cwd = process.cwd();
    process.chdir(path.join(dir, 'local'));
    try {
      expect((await cli(['files', 'download', 's2', 'img/photo.png'])).text).toBe(
        `saved: photo.png (${bytes.length} bytes)\n`,
      );
      expect(fs.readFileSync(local('photo.png')).equals(bytes)).toBe(true);
    } finally {
      process.chdir(cwd);
    }
    expect((await cli(['files', 'delete', 's2', 'img/photo.png'])).text).toBe('deleted: img/photo.png\n');
    expect((await cli(['files', 'delete', 's2', 'img/photo.png', '--json'])).stderr).toBe(
      'error: not_found: no file "img/photo.png" in the workspace (HTTP 404)\n',
    );
  });

  test("the service's refusals are one line and exit 1; a local file that cannot be read too", async () => {
    fs.writeFileSync(local('big.bin'), Buffer.alloc(MiB + 10));
    const big = await cli(['files', 'upload', 's2', local('big.bin')]);
    expect([big.code, big.text]).toEqual([1, '']);
    expect(big.stderr).toMatch(
      /^error: payload_too_large: the upload \(1 MiB\) would take the workspace past its limit of 1 MiB .* \(HTTP 413\)\n$/,
    );
    const missing = await cli(['files', 'upload', 's2', local('nope.txt')]);
    expect([missing.code, missing.stderr]).toEqual([
      1,
      `error: cannot read ${local('nope.txt')}: ENOENT: no such file or directory\n`,
    ]);
    const outside = await cli(['files', 'download', 's2', '../../etc/passwd', local('passwd')]);
    expect([outside.code, outside.stderr]).toEqual([
      1,
      'error: invalid_request: path.path: "../../etc/passwd" has a .. segment: paths stay inside the workspace (HTTP 400)\n',
    ]);
    expect(fs.existsSync(local('passwd'))).toBe(false);
  });

  test('bad usage is one line and the usage, exit 2; --help lists the actions; agent --help lists files', async () => {
    const usage = async (args: string[], why: string) => {
      const r = await cli(args);
      expect([args, r.code, r.text]).toEqual([args, 2, '']);
      expect(r.stderr.split('\n').filter(Boolean)).toEqual([
        `agent files: ${why}`,
        expect.stringMatching(/^usage: agent files upload /),
      ]);
    };
    await usage(['files'], 'missing argument');
    await usage(['files', 'copy', 's1'], 'unknown files action: copy (upload, list, download, delete)');
    await usage(
      ['files', 'upload', 's1'],
      'missing arguments: agent files upload <session> <local-file> [remote-path]',
    );
    await usage(['files', 'list'], 'missing arguments: agent files list <session> [--prefix P]');
    await usage(['files', 'delete', 's1', 'a', 'b'], 'unexpected argument: b');
    await usage(['files', 'upload', 's1', 'a', '--prefix', 'x'], '--prefix goes with list');
    const help = await cli(['files', '--help']);
    expect(help.text).toMatch(/^usage: agent files upload <session> <local-file> \[remote-path\] \| agent files list/);
    for (const action of ['upload', 'list', 'download', 'delete'])
      expect(help.text).toMatch(new RegExp(`^  ${action} <session>`, 'm'));
    expect((await cli(['--help'])).text).toMatch(
      /^ {2}files +Upload, list, download or delete the files of a session's workspace\.$/m,
    );
  });
});
