// Pinned workspace paths: links inside the workspace are followed (relative ones, and absolute
// ones as the sandbox names them, /workspace/...), links that lead out are refused, and, the point
// of pinning, a folder on the way swapped for a link to a host folder after the path was pinned
// changes nothing: reads and writes through the pinned path stay in the folder that was opened,
// and a last name swapped for a link is never followed. The editor's and search's own race tests
// are in test/activities/computer/ (workspace-races.e2e).
import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkspacePathError } from '../../../src/common/workspaces/paths';
import { openNoFollow, pinWorkspacePath, readdirNoFollow } from '../../../src/common/workspaces/pinned';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'pinned-'));
  root = path.join(base, 'files');
  outside = path.join(base, 'host');
  await fs.mkdir(path.join(root, 'src', 'lib'), { recursive: true });
  await fs.writeFile(path.join(root, 'src', 'lib', 'a.txt'), 'inside');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'a.txt'), 'HOST SECRET');
});
afterEach(() => fs.rm(base, { recursive: true, force: true }));

async function readPinned(name: string): Promise<string> {
  const p = await pinWorkspacePath(root, name);
  try {
    const h = await openNoFollow(p.abs, C.O_RDONLY);
    try {
      return await h.readFile('utf8');
    } finally {
      await h.close();
    }
  } finally {
    await p.close();
  }
}

test('a plain path, and the root itself', async () => {
  expect(await readPinned('src/lib/a.txt')).toBe('inside');
  const p = await pinWorkspacePath(root, '/workspace');
  expect(p.rel).toBe('');
  expect((await fs.lstat(p.abs)).isDirectory()).toBe(true);
  expect((await readdirNoFollow(p.abs)).map((e) => e.name)).toEqual(['src']);
  await p.close();
});

test('links inside the workspace are followed: relative, and absolute as the sandbox names them', async () => {
  await fs.symlink('lib', path.join(root, 'src', 'rel'));
  await fs.symlink('/workspace/src/lib', path.join(root, 'abs'));
  await fs.symlink('../src/lib/a.txt', path.join(root, 'src', 'file-link'));
  expect(await readPinned('src/rel/a.txt')).toBe('inside');
  expect(await readPinned('abs/a.txt')).toBe('inside');
  expect(await readPinned('src/file-link')).toBe('inside');
  const p = await pinWorkspacePath(root, 'abs/a.txt');
  expect([p.rel, p.real]).toEqual(['abs/a.txt', 'src/lib/a.txt']);
  await p.close();
});

test.each([
  ['an absolute host path', () => outside],
  ['a relative path out', () => '../../host'],
  ['the service state beside the files', () => '../state'],
])('a link to %s is refused, on the way or last', async (_what, target) => {
  await fs.symlink(target(), path.join(root, 'out'));
  for (const name of ['out', 'out/a.txt'])
    await expect(pinWorkspacePath(root, name)).rejects.toThrow(WorkspacePathError);
});

test('a link inside that leads to a link going out is refused', async () => {
  await fs.symlink(outside, path.join(root, 'src', 'out'));
  await fs.symlink('src/out', path.join(root, 'hop'));
  await expect(pinWorkspacePath(root, 'hop/a.txt')).rejects.toThrow(/leads out of the workspace/);
});

test('a dangling link inside leads to a missing entry inside: a write through the pin creates it there', async () => {
  await fs.symlink('src/later.txt', path.join(root, 'dangling'));
  const p = await pinWorkspacePath(root, 'dangling');
  expect(p.real).toBe('src/later.txt');
  await fs.writeFile(path.join(path.dirname(p.abs), '.tmp'), 'later');
  await fs.rename(path.join(path.dirname(p.abs), '.tmp'), p.abs);
  await p.close();
  expect(await fs.readFile(path.join(root, 'src', 'later.txt'), 'utf8')).toBe('later');
});

test('a loop of links is refused', async () => {
  await fs.symlink('b', path.join(root, 'a'));
  await fs.symlink('a', path.join(root, 'b'));
  await expect(pinWorkspacePath(root, 'a/x')).rejects.toThrow(/too many links/);
});

test('makeParents makes the missing folders; without it a missing folder is ENOENT, a file on the way ENOTDIR', async () => {
  await expect(pinWorkspacePath(root, 'new/deep/x.txt')).rejects.toMatchObject({ code: 'ENOENT' });
  await expect(pinWorkspacePath(root, 'src/lib/a.txt/x')).rejects.toMatchObject({ code: 'ENOTDIR' });
  const p = await pinWorkspacePath(root, 'new/deep/x.txt', { makeParents: true });
  await fs.writeFile(p.abs, 'made');
  await p.close();
  expect(await fs.readFile(path.join(root, 'new', 'deep', 'x.txt'), 'utf8')).toBe('made');
});

test('a folder on the way swapped for a link to the host after pinning: reads and writes stay in the opened folder', async () => {
  const p = await pinWorkspacePath(root, 'src/lib/a.txt');
  // What a command would do between the check and the use.
  await fs.rename(path.join(root, 'src', 'lib'), path.join(root, 'src', 'moved'));
  await fs.symlink(outside, path.join(root, 'src', 'lib'));
  const h = await openNoFollow(p.abs, C.O_RDONLY);
  expect(await h.readFile('utf8')).toBe('inside');
  await h.close();
  await fs.writeFile(path.join(path.dirname(p.abs), '.tmp'), 'written');
  await fs.rename(path.join(path.dirname(p.abs), '.tmp'), p.abs);
  await p.close();
  expect(await fs.readFile(path.join(outside, 'a.txt'), 'utf8')).toBe('HOST SECRET');
  expect(await fs.readFile(path.join(root, 'src', 'moved', 'a.txt'), 'utf8')).toBe('written');
});

test('the last name swapped for a link after pinning is not followed (ELOOP), and a rename replaces the link', async () => {
  const p = await pinWorkspacePath(root, 'src/lib/a.txt');
  await fs.rm(path.join(root, 'src', 'lib', 'a.txt'));
  await fs.symlink(path.join(outside, 'a.txt'), path.join(root, 'src', 'lib', 'a.txt'));
  await expect(openNoFollow(p.abs, C.O_RDONLY)).rejects.toMatchObject({ code: 'ELOOP' });
  await expect(readdirNoFollow(p.abs)).rejects.toMatchObject({ code: expect.stringMatching(/ELOOP|ENOTDIR/) });
  await fs.writeFile(path.join(path.dirname(p.abs), '.tmp'), 'replaced');
  await fs.rename(path.join(path.dirname(p.abs), '.tmp'), p.abs);
  await p.close();
  expect(await fs.readFile(path.join(outside, 'a.txt'), 'utf8')).toBe('HOST SECRET');
  expect((await fs.lstat(path.join(root, 'src', 'lib', 'a.txt'))).isFile()).toBe(true);
});
