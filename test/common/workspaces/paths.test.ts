// The one check of workspace paths (the files API and the computer's tools use it): what the
// agent names is normalised, and nothing it names, by `..`, an absolute path or a symbolic link,
// leads out of the workspace's files folder, not even to the service's own state folder beside it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkspacePathError, normaliseWorkspacePath, resolveWorkspacePath } from '../../../src/common/workspaces/paths';

describe('normaliseWorkspacePath', () => {
  test.each([
    ['a.txt', 'a.txt'],
    ['./src//lib/./x.ts', 'src/lib/x.ts'],
    ['src/lib/../x.ts', 'src/x.ts'],
    ['dir/', 'dir'],
    ['', ''],
    ['.', ''],
    ['/workspace', ''],
    ['/workspace/', ''],
    ['/workspace/src/a.py', 'src/a.py'],
    ['src\\win\\path.txt', 'src/win/path.txt'],
  ])('%j is %j', (name, rel) => {
    expect(normaliseWorkspacePath(name)).toBe(rel);
  });

  test.each([
    ['..', /leads out of the workspace/],
    ['../x', /leads out of the workspace/],
    ['a/../../x', /leads out of the workspace/],
    ['/workspace/../etc/passwd', /leads out of the workspace/],
    ['/etc/passwd', /is absolute/],
    ['/workspacex/a', /is absolute/],
    ['..\\x', /leads out of the workspace/],
    ['a\0b', /NUL/],
  ])('%j is refused', (name, message) => {
    expect(() => normaliseWorkspacePath(name)).toThrow(WorkspacePathError);
    expect(() => normaliseWorkspacePath(name)).toThrow(message);
  });

  test('a name that is not a string is refused', () => {
    expect(() => normaliseWorkspacePath(7 as unknown as string)).toThrow(WorkspacePathError);
  });
});

describe('resolveWorkspacePath', () => {
  let root: string;
  let files: string;

  beforeEach(async () => {
    // The session's folder as layout.ts makes it: files beside state, and another session beside.
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-paths-'));
    files = path.join(root, 'files');
    await fs.mkdir(path.join(files, 'src'), { recursive: true });
    await fs.mkdir(path.join(root, 'state'));
    await fs.mkdir(path.join(root, 'files-other'));
    await fs.writeFile(path.join(files, 'src', 'a.py'), 'x');
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  const link = (target: string, name: string) => fs.symlink(target, path.join(files, name));

  test('a path inside, existing or not, is its host path', async () => {
    expect(await resolveWorkspacePath(files, 'src/a.py')).toEqual({
      rel: 'src/a.py',
      abs: path.join(files, 'src/a.py'),
    });
    expect(await resolveWorkspacePath(files, '/workspace/new/dir/b.txt')).toEqual({
      rel: 'new/dir/b.txt',
      abs: path.join(files, 'new/dir/b.txt'),
    });
    expect(await resolveWorkspacePath(files, '')).toEqual({ rel: '', abs: files });
  });

  test('a path under a regular file resolves (it does not exist; opening it says so)', async () => {
    expect(await resolveWorkspacePath(files, 'src/a.py/x')).toEqual({
      rel: 'src/a.py/x',
      abs: path.join(files, 'src/a.py/x'),
    });
  });

  test('a link that stays inside is followed', async () => {
    await link('src', 'code');
    await link(path.join(files, 'src', 'a.py'), 'abs-link.py');
    await link('.', 'self');
    expect((await resolveWorkspacePath(files, 'code/a.py')).abs).toBe(path.join(files, 'code/a.py'));
    expect((await resolveWorkspacePath(files, 'abs-link.py')).rel).toBe('abs-link.py');
    expect((await resolveWorkspacePath(files, 'self/src')).rel).toBe('self/src');
  });

  test.each([
    ['a link to /etc', '/etc', 'out/passwd'],
    ['the link itself', '/etc', 'out'],
    ["a link to the service's state folder beside", '../state', 'out/notes'],
    ['a link to a sibling folder whose name starts like the workspace', '../files-other', 'out/x'],
    ['a link to the parent', '..', 'out/files/src/a.py'],
  ])('%s is refused', async (_what, target, name) => {
    await link(target, 'out');
    await expect(resolveWorkspacePath(files, name)).rejects.toThrow(WorkspacePathError);
    await expect(resolveWorkspacePath(files, name)).rejects.toThrow(/leads out of the workspace/);
  });

  test('a link inside that leads to a link going out is refused', async () => {
    await link('/etc', 'out');
    await link('out', 'hop');
    await expect(resolveWorkspacePath(files, 'hop/passwd')).rejects.toThrow(/leads out of the workspace/);
  });

  test('a broken link is refused: where it would lead once its target exists is unknown', async () => {
    await link('/nonexistent-target-dir/file', 'dangling');
    await expect(resolveWorkspacePath(files, 'dangling')).rejects.toThrow(/broken link/);
    await link('loop', 'loop');
    await expect(resolveWorkspacePath(files, 'loop/x')).rejects.toThrow(WorkspacePathError);
  });

  test('`..` is taken off the name before any link is looked at: the host path is the one checked', async () => {
    // The returned path has no `..` left for the kernel to resolve through a link differently.
    await link('src', 'inner');
    expect((await resolveWorkspacePath(files, 'inner/../src/a.py')).abs).toBe(path.join(files, 'src/a.py'));
  });
});
