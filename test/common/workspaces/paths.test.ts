// The one check of workspace path names (the files API and the computer's tools use it): what the
// agent names is normalised, and nothing it names by `..` or an absolute path leads out of the
// workspace's files folder (links: pinned.test.ts).
import { WorkspacePathError, normaliseWorkspacePath } from '../../../src/common/workspaces/paths';

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
