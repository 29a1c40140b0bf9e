// What a workspace holds, for the files API's list and the quota: regular files only, links never
// followed (a link to /etc must not list or count /etc), sorted by path.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { listWorkspaceFiles, workspaceUsage } from '../../../src/common/workspaces/usage';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-usage-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const write = async (rel: string, content: string) => {
  await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
  await fs.writeFile(path.join(dir, rel), content);
};

test('a missing folder holds nothing', async () => {
  expect(await listWorkspaceFiles(path.join(dir, 'missing'))).toEqual([]);
  expect(await workspaceUsage(path.join(dir, 'missing'))).toEqual({ bytes: 0, files: 0 });
});

test('files at every depth, hidden ones too, sorted by path with their sizes and times', async () => {
  await write('b.txt', 'bb');
  await write('a/z/deep.txt', 'deep');
  await write('.hidden/x', '');
  await write('a/b.txt', '123');
  const when = new Date('2026-01-02T03:04:05.000Z');
  await fs.utimes(path.join(dir, 'b.txt'), when, when);
  await fs.mkdir(path.join(dir, 'empty-folder'));
  const list = await listWorkspaceFiles(dir);
  expect(list.map((f) => [f.path, f.size])).toEqual([
    ['.hidden/x', 0],
    ['a/b.txt', 3],
    ['a/z/deep.txt', 4],
    ['b.txt', 2],
  ]);
  expect(list.find((f) => f.path === 'b.txt')?.modified_at).toBe('2026-01-02T03:04:05.000Z');
  expect(await workspaceUsage(dir)).toEqual({ bytes: 9, files: 4 });
});

test('links are neither followed nor counted', async () => {
  await write('real.txt', 'abc');
  await fs.symlink('/etc', path.join(dir, 'etc'));
  await fs.symlink('real.txt', path.join(dir, 'alias.txt'));
  expect((await listWorkspaceFiles(dir)).map((f) => f.path)).toEqual(['real.txt']);
  expect(await workspaceUsage(dir)).toEqual({ bytes: 3, files: 1 });
});

test('a prefix keeps the paths that start with it', async () => {
  await write('src/a.ts', 'a');
  await write('src/lib/b.ts', 'b');
  await write('test/c.ts', 'c');
  expect((await listWorkspaceFiles(dir, 'src/')).map((f) => f.path)).toEqual(['src/a.ts', 'src/lib/b.ts']);
});

test('a sparse file counts its length (the quota is of what the files hold, not of blocks)', async () => {
  const handle = await fs.open(path.join(dir, 'sparse'), 'w');
  await handle.truncate(5 * 1024 * 1024);
  await handle.close();
  expect(await workspaceUsage(dir)).toEqual({ bytes: 5 * 1024 * 1024, files: 1 });
});
