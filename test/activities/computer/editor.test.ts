// The str_replace_editor tool on a real workspace folder: each command's result as the model reads
// it, its errors (ToolInputError, with what to do), the undo history kept in the state folder and
// not in the agent's files, the quota, and paths that lead out refused.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runEditor, type WorkspaceQuota } from '../../../activities/computer/editor';
import { ToolInputError } from '../../../activities/tools/builtin';
import { sessionWorkspace, type SessionWorkspace } from '../../../src/common/workspaces/layout';

let dir: string;
let ws: SessionWorkspace;
const roomy: WorkspaceQuota = { maxBytes: 10 * 1024 * 1024, maxFiles: 100 };

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'editor-'));
  ws = sessionWorkspace(dir, 'acct', 'sess');
  await fs.mkdir(ws.files, { recursive: true });
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const run = (args: Record<string, unknown>, quota = roomy) => runEditor(args, ws, quota);
const text = async (args: Record<string, unknown>, quota = roomy) => (await run(args, quota)).text;
const fails = (args: Record<string, unknown>, quota = roomy) => expect(run(args, quota)).rejects;
const read = (rel: string) => fs.readFile(path.join(ws.files, rel), 'utf8');
const put = async (rel: string, content: string | Buffer) => {
  await fs.mkdir(path.dirname(path.join(ws.files, rel)), { recursive: true });
  await fs.writeFile(path.join(ws.files, rel), content);
};
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('create', () => {
  test('writes the file, its folders made, and reports the path changed', async () => {
    const result = await run({ command: 'create', path: '/workspace/src/app/main.py', file_text: 'print(1)\n' });
    expect(result).toEqual({
      text: 'File created successfully at: /workspace/src/app/main.py (1 lines).\n',
      changed: ['src/app/main.py'],
    });
    expect(await read('src/app/main.py')).toBe('print(1)\n');
  });

  test('refuses a path that exists, as the reference tool does, and leaves the file alone', async () => {
    await put('a.txt', 'keep');
    await fails({ command: 'create', path: 'a.txt', file_text: 'new' }).toThrow(
      /File already exists at: \/workspace\/a.txt\. Cannot overwrite files using command `create`/,
    );
    expect(await read('a.txt')).toBe('keep');
    await fails({ command: 'create', path: '', file_text: 'x' }).toThrow(/only the view command/);
  });

  test('a parent that is a file is said so', async () => {
    await put('a.txt', 'x');
    await fails({ command: 'create', path: 'a.txt/b.txt', file_text: 'x' }).toThrow(
      /cannot write \/workspace\/a.txt\/b.txt: a part of the path is a file/,
    );
  });

  test('leaves no temporary file behind', async () => {
    await run({ command: 'create', path: 'd/a.txt', file_text: 'x' });
    await run({ command: 'str_replace', path: 'd/a.txt', old_str: 'x', new_str: 'y' });
    expect(await fs.readdir(path.join(ws.files, 'd'))).toEqual(['a.txt']);
  });
});

describe('view', () => {
  test('a file, numbered as cat -n, tabs as they are', async () => {
    await put('a.py', 'def f():\n\treturn 1\n');
    expect(await text({ command: 'view', path: 'a.py' })).toBe(
      "Here's the result of running `cat -n` on /workspace/a.py:\n     1\tdef f():\n     2\t\treturn 1\n",
    );
  });

  test('view_range: [first, last], -1 to the end, past the end to the end with a note', async () => {
    await put('n.txt', lines(10));
    expect(await text({ command: 'view', path: 'n.txt', view_range: [3, 4] })).toBe(
      "Here's the result of running `cat -n` on /workspace/n.txt:\n     3\tline 3\n     4\tline 4\n",
    );
    expect(await text({ command: 'view', path: 'n.txt', view_range: [9, -1] })).toMatch(
      / {5}9\tline 9\n {4}10\tline 10\n$/,
    );
    expect(await text({ command: 'view', path: 'n.txt', view_range: [10, 50] })).toMatch(
      /10\tline 10\n\[The file has 10 lines: shown to line 10\.\]\n$/,
    );
  });

  test.each([
    [[0, 3], /first line 0 must be within \[1, 10\]/],
    [[11, -1], /first line 11 must be within \[1, 10\]/],
    [[5, 4], /last line must be at least its first, or -1/],
    [[1], /a list of two whole numbers/],
    ['1-3', /a list of two whole numbers/],
  ])('view_range %j is refused', async (range, message) => {
    await put('n.txt', lines(10));
    await fails({ command: 'view', path: 'n.txt', view_range: range }).toThrow(message);
  });

  test('an empty file says so', async () => {
    await put('e.txt', '');
    expect(await text({ command: 'view', path: 'e.txt' })).toBe('The file /workspace/e.txt is empty.\n');
  });

  test('a folder: two levels deep, sorted, folders with /, links with their target, hidden ones counted', async () => {
    await put('b.txt', '');
    await put('a/one.txt', '');
    await put('a/deep/two.txt', '');
    await put('a/deep/deeper/three.txt', '');
    await put('.git/config', '');
    await put('a/.env', '');
    await fs.symlink('/etc', path.join(ws.files, 'etc'));
    expect(await text({ command: 'view', path: '/workspace' })).toBe(
      'Here are the files and folders up to 2 levels deep in /workspace, excluding hidden items (2 hidden, whose names start with a dot, not shown):\n' +
        '/workspace/a/\n/workspace/a/deep/\n/workspace/a/one.txt\n/workspace/b.txt\n/workspace/etc -> /etc\n',
    );
    expect(await text({ command: 'view', path: 'a/deep' })).toMatch(
      /:\n\/workspace\/a\/deep\/deeper\/\n\/workspace\/a\/deep\/deeper\/three\.txt\n\/workspace\/a\/deep\/two\.txt\n$/,
    );
    await fails({ command: 'view', path: 'a', view_range: [1, 2] }).toThrow(
      /not allowed when `path` points to a folder/,
    );
  });

  test('a binary file is named as such, its bytes not shown', async () => {
    await put('img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await put('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await fails({ command: 'view', path: 'img.png' }).toThrow(/\/workspace\/img.png is a binary file \(7 bytes\)/);
    await fails({ command: 'view', path: 'latin1.txt' }).toThrow(/is a binary file/);
  });

  test('a long file is cut near 30,000 characters, with the range to view next', async () => {
    await put('big.txt', lines(5000));
    const out = await text({ command: 'view', path: 'big.txt' });
    expect(out.length).toBeLessThan(31_000);
    const shownLast = Number(/lines 1-(\d+) shown, (\d+) more not shown/.exec(out)?.[1]);
    expect(out).toContain(`${String(shownLast).padStart(6)}\tline ${shownLast}\n`);
    expect(out).not.toContain(`\tline ${shownLast + 1}\n`);
    expect(out).toContain(`${5000 - shownLast} more not shown. See them with view_range (e.g. [${shownLast + 1}, `);
  });

  test('a very long line is cut, saying how much is left', async () => {
    await put('min.js', 'x'.repeat(5000));
    expect(await text({ command: 'view', path: 'min.js' })).toContain(
      `${'x'.repeat(2000)}… [3000 more characters on this line]`,
    );
  });

  test('a file over 10 MiB is refused, pointing to grep and bash', async () => {
    const handle = await fs.open(path.join(ws.files, 'huge.log'), 'w');
    await handle.truncate(11 * 1024 * 1024);
    await handle.close();
    await fails({ command: 'view', path: 'huge.log' }).toThrow(
      /is 11\.0 MiB: the editor opens files up to 10\.0 MiB\. Find lines with grep/,
    );
  });

  test('a missing path says so; a view changes nothing', async () => {
    await fails({ command: 'view', path: 'nope.txt' }).toThrow('The path /workspace/nope.txt does not exist.');
    await put('a.txt', 'x\n');
    expect((await run({ command: 'view', path: 'a.txt' })).changed).toEqual([]);
  });
});

describe('str_replace', () => {
  test('replaces the one occurrence and shows the edited lines with four around them', async () => {
    await put('n.txt', lines(20));
    const result = await run({ command: 'str_replace', path: 'n.txt', old_str: 'line 10\n', new_str: 'ten\nTEN\n' });
    expect(result.changed).toEqual(['n.txt']);
    expect(await read('n.txt')).toBe(lines(20).replace('line 10\n', 'ten\nTEN\n'));
    const numbers = [...result.text.matchAll(/^ +(\d+)\t/gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(result.text).toContain('    10\tten\n    11\tTEN\n    12\tline 11\n');
    expect(result.text).toMatch(/^The file \/workspace\/n.txt has been edited\. /);
  });

  test('an empty new_str (or none) deletes old_str', async () => {
    await put('a.txt', 'keep drop keep\n');
    await run({ command: 'str_replace', path: 'a.txt', old_str: ' drop', new_str: '' });
    expect(await read('a.txt')).toBe('keep keep\n');
    await run({ command: 'str_replace', path: 'a.txt', old_str: ' keep' });
    expect(await read('a.txt')).toBe('keep\n');
  });

  test('old_str absent: an error naming it, the file untouched', async () => {
    await put('a.txt', 'hello world\n');
    await fails({ command: 'str_replace', path: 'a.txt', old_str: 'hello  world', new_str: 'x' }).toThrow(
      'No replacement was performed: old_str "hello  world" did not appear verbatim in /workspace/a.txt',
    );
    expect(await read('a.txt')).toBe('hello world\n');
  });

  test('old_str several times: an error listing the lines where each starts, multi-line and overlapping ones too', async () => {
    await put('a.txt', 'x = 1\ny = 2\nx = 1\ny = 2\naaa\n');
    await fails({ command: 'str_replace', path: 'a.txt', old_str: 'x = 1\ny', new_str: 'z' }).toThrow(
      'old_str occurs 2 times in /workspace/a.txt, starting on lines [1, 3]',
    );
    await fails({ command: 'str_replace', path: 'a.txt', old_str: 'aa', new_str: 'b' }).toThrow(
      'old_str occurs 2 times in /workspace/a.txt, starting on lines [5, 5]',
    );
    await put('many.txt', 'x\n'.repeat(30));
    await fails({ command: 'str_replace', path: 'many.txt', old_str: 'x', new_str: 'y' }).toThrow(
      `old_str occurs 30 times in /workspace/many.txt, starting on lines [${Array.from({ length: 20 }, (_, i) => i + 1).join(', ')}, … 10 more]`,
    );
    expect(await read('a.txt')).toBe('x = 1\ny = 2\nx = 1\ny = 2\naaa\n');
  });

  test('tabs elsewhere in the file are kept (the reference tool expanded them)', async () => {
    await put('Makefile', 'all:\n\techo one\n');
    await run({ command: 'str_replace', path: 'Makefile', old_str: 'one', new_str: 'two' });
    expect(await read('Makefile')).toBe('all:\n\techo two\n');
  });

  test("the file's mode is kept: a script stays executable", async () => {
    await put('run.sh', '#!/bin/sh\necho a\n');
    await fs.chmod(path.join(ws.files, 'run.sh'), 0o750);
    await run({ command: 'str_replace', path: 'run.sh', old_str: 'echo a', new_str: 'echo b' });
    expect((await fs.stat(path.join(ws.files, 'run.sh'))).mode & 0o777).toBe(0o750);
  });

  test('an empty old_str, a folder and a binary file are refused', async () => {
    await put('a.txt', 'x');
    await put('bin', Buffer.from([1, 0, 2]));
    await fails({ command: 'str_replace', path: 'a.txt', old_str: '', new_str: 'y' }).toThrow(/must not be empty/);
    await fails({ command: 'str_replace', path: '', old_str: 'x' }).toThrow(/only the view command/);
    await fs.mkdir(path.join(ws.files, 'dir'));
    await fails({ command: 'str_replace', path: 'dir', old_str: 'x' }).toThrow(/is a folder/);
    await fails({ command: 'str_replace', path: 'bin', old_str: 'x' }).toThrow(/binary file/);
  });

  test('a link inside the workspace: the file it leads to is edited, the link stays', async () => {
    await put('real/a.txt', 'old\n');
    await fs.symlink('real/a.txt', path.join(ws.files, 'alias.txt'));
    await run({ command: 'str_replace', path: 'alias.txt', old_str: 'old', new_str: 'new' });
    expect(await read('real/a.txt')).toBe('new\n');
    expect((await fs.lstat(path.join(ws.files, 'alias.txt'))).isSymbolicLink()).toBe(true);
  });

  test('two edits of one file in the same round both land', async () => {
    await put('a.txt', 'one\ntwo\n');
    await Promise.all([
      run({ command: 'str_replace', path: 'a.txt', old_str: 'one', new_str: '1' }),
      run({ command: 'str_replace', path: 'a.txt', old_str: 'two', new_str: '2' }),
    ]);
    expect(await read('a.txt')).toBe('1\n2\n');
  });
});

describe('insert', () => {
  test('after insert_line, 0 = at the top, the snippet numbered', async () => {
    await put('n.txt', lines(3));
    const result = await text({ command: 'insert', path: 'n.txt', insert_line: 0, new_str: 'top' });
    expect(await read('n.txt')).toBe('top\nline 1\nline 2\nline 3\n');
    expect(result).toContain('     1\ttop\n     2\tline 1\n     3\tline 2\n     4\tline 3\n');
    await run({ command: 'insert', path: 'n.txt', insert_line: 4, new_str: 'end a\nend b\n' });
    expect(await read('n.txt')).toBe('top\nline 1\nline 2\nline 3\nend a\nend b\n');
    await run({ command: 'insert', path: 'n.txt', insert_line: 2, new_str: 'mid' });
    expect(await read('n.txt')).toBe('top\nline 1\nmid\nline 2\nline 3\nend a\nend b\n');
  });

  test('a file without a final newline keeps its lack of one; an empty file gets one', async () => {
    await put('a.txt', 'one\ntwo');
    await run({ command: 'insert', path: 'a.txt', insert_line: 2, new_str: 'three' });
    expect(await read('a.txt')).toBe('one\ntwo\nthree');
    await put('e.txt', '');
    await run({ command: 'insert', path: 'e.txt', insert_line: 0, new_str: 'first' });
    expect(await read('e.txt')).toBe('first\n');
  });

  test('a line out of range: an error with the valid range', async () => {
    await put('n.txt', lines(3));
    await fails({ command: 'insert', path: 'n.txt', insert_line: 4, new_str: 'x' }).toThrow(
      'Invalid `insert_line` 4: it must be within [0, 3]',
    );
    await fails({ command: 'insert', path: 'n.txt', insert_line: -1, new_str: 'x' }).toThrow(/`insert_line`/);
    await fails({ command: 'insert', path: 'n.txt', insert_line: 1 }).toThrow(
      /`new_str` \(a string\) is required for insert/,
    );
  });
});

describe('undo_edit', () => {
  test('each undo goes one edit further back; the create is undone by removing the file', async () => {
    await run({ command: 'create', path: 'a.txt', file_text: 'v1\n' });
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'v1', new_str: 'v2' });
    await run({ command: 'insert', path: 'a.txt', insert_line: 1, new_str: 'v3' });
    const first = await run({ command: 'undo_edit', path: 'a.txt' });
    expect(first.changed).toEqual(['a.txt']);
    expect(first.text).toContain(
      "undone successfully. 2 earlier edit(s) can still be undone. Here's the result of running `cat -n` on /workspace/a.txt:\n     1\tv2\n",
    );
    expect(await read('a.txt')).toBe('v2\n');
    await run({ command: 'undo_edit', path: 'a.txt' });
    expect(await read('a.txt')).toBe('v1\n');
    expect(await text({ command: 'undo_edit', path: 'a.txt' })).toMatch(/it created the file, which is now removed/);
    await expect(fs.stat(path.join(ws.files, 'a.txt'))).rejects.toThrow(/ENOENT/);
    await fails({ command: 'undo_edit', path: 'a.txt' }).toThrow('No edit history found for /workspace/a.txt');
  });

  test("the history is in the state folder, not in the agent's files", async () => {
    await run({ command: 'create', path: 'a.txt', file_text: 'secret-before\n' });
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'secret-before', new_str: 'after' });
    const all = async (d: string): Promise<string[]> =>
      (await fs.readdir(d, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map((e) => path.join(e.parentPath, e.name));
    expect(await all(ws.files)).toEqual([path.join(ws.files, 'a.txt')]);
    const kept = await Promise.all((await all(ws.state)).map((f) => fs.readFile(f, 'utf8')));
    expect(kept).toContain('secret-before\n');
  });

  test('the history is on disk: a fresh copy of the module (a restarted worker) undoes', async () => {
    await run({ command: 'create', path: 'a.txt', file_text: 'v1\n' });
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'v1', new_str: 'v2' });
    await jest.isolateModulesAsync(async () => {
      const fresh = await import('../../../activities/computer/editor');
      await fresh.runEditor({ command: 'undo_edit', path: 'a.txt' }, ws, roomy);
    });
    expect(await read('a.txt')).toBe('v1\n');
  });

  test('ten edits per file are kept', async () => {
    await put('c.txt', '0');
    for (let i = 1; i <= 12; i++)
      await run({ command: 'str_replace', path: 'c.txt', old_str: String(i - 1), new_str: String(i) });
    for (let i = 11; i >= 2; i--) {
      await run({ command: 'undo_edit', path: 'c.txt' });
      expect(await read('c.txt')).toBe(String(i));
    }
    await fails({ command: 'undo_edit', path: 'c.txt' }).toThrow(/keeps the last 10 edits/);
  });

  test("another file's history is its own", async () => {
    await put('a.txt', 'a');
    await put('b.txt', 'b');
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'a', new_str: 'A' });
    await fails({ command: 'undo_edit', path: 'b.txt' }).toThrow(/No edit history/);
    await run({ command: 'undo_edit', path: '/workspace/./a.txt' });
    expect(await read('a.txt')).toBe('a');
  });
});

describe('quota', () => {
  const tight: WorkspaceQuota = { maxBytes: 100, maxFiles: 2 };

  test('a create beyond the bytes is refused, saying the quota and the usage', async () => {
    await put('a.txt', 'x'.repeat(60));
    await fails({ command: 'create', path: 'b.txt', file_text: 'y'.repeat(50) }, tight).toThrow(
      'would take the workspace over its quota: the workspace holds 60 bytes in 1 files; its quota is 100 bytes and 2 files',
    );
    await expect(fs.stat(path.join(ws.files, 'b.txt'))).rejects.toThrow(/ENOENT/);
    await run({ command: 'create', path: 'b.txt', file_text: 'y'.repeat(40) }, tight);
  });

  test('a create beyond the file count is refused', async () => {
    await put('a.txt', '');
    await put('b.txt', '');
    await fails({ command: 'create', path: 'c.txt', file_text: '' }, tight).toThrow(
      /holds 0 bytes in 2 files; its quota is 100 bytes and 2 files/,
    );
  });

  test('an edit that grows past the quota is refused and leaves nothing to undo', async () => {
    await put('a.txt', 'v0');
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'v0', new_str: 'v1' }, tight);
    await fails({ command: 'str_replace', path: 'a.txt', old_str: 'v1', new_str: 'z'.repeat(200) }, tight).toThrow(
      /over its quota/,
    );
    await fails({ command: 'insert', path: 'a.txt', insert_line: 0, new_str: 'z'.repeat(200) }, tight).toThrow(
      /over its quota/,
    );
    expect(await read('a.txt')).toBe('v1');
    await run({ command: 'undo_edit', path: 'a.txt' }, tight);
    expect(await read('a.txt')).toBe('v0');
  });

  test('an edit that shrinks a workspace already over its quota goes through', async () => {
    await put('a.txt', 'a'.repeat(50) + 'b'.repeat(100));
    await run({ command: 'str_replace', path: 'a.txt', old_str: 'b'.repeat(100), new_str: '' }, tight);
    expect(await read('a.txt')).toBe('a'.repeat(50));
  });
});

describe('arguments and paths', () => {
  test.each([
    [
      { command: 'delete', path: 'a' },
      /Unknown command "delete": the commands are view, create, str_replace, insert, undo_edit/,
    ],
    [{ command: 'view' }, /`path` \(a string\) is required/],
    [{ command: 'view', path: 'a', colour: 'red' }, /Unknown parameter\(s\): colour/],
    [{ command: 'create', path: 'a' }, /`file_text` \(a string\) is required for create/],
    [{ command: 'str_replace', path: 'a', new_str: 'b' }, /`old_str` \(a string\) is required for str_replace/],
  ])('%j is refused', async (args, message) => {
    await fails(args).toThrow(message);
    await fails(args).toThrow(ToolInputError);
  });

  test('null stands for an argument not given (strict schemas send it)', async () => {
    await put('a.txt', 'x\n');
    expect(await text({ command: 'view', path: 'a.txt', view_range: null, file_text: null })).toContain('     1\tx');
  });

  test.each([
    ['../outside.txt', /leads out of the workspace/],
    ['/etc/passwd', /is absolute/],
    ['/workspace/../state/x', /leads out of the workspace/],
  ])('%j is refused', async (name, message) => {
    await fails({ command: 'create', path: name, file_text: 'x' }).toThrow(message);
    await fails({ command: 'view', path: name }).toThrow(ToolInputError);
  });

  test('a link leading out is refused: /etc/passwd is neither shown nor written', async () => {
    await fs.mkdir(ws.state);
    await fs.symlink('/etc', path.join(ws.files, 'etc'));
    await fs.symlink('../state', path.join(ws.files, 'notes'));
    await fails({ command: 'view', path: 'etc/passwd' }).toThrow(/leads out of the workspace/);
    await fails({ command: 'view', path: 'etc' }).toThrow(/leads out of the workspace/);
    await fails({ command: 'create', path: 'notes/x.txt', file_text: 'x' }).toThrow(/leads out of the workspace/);
    await fails({ command: 'str_replace', path: 'etc/hostname', old_str: 'a', new_str: 'b' }).toThrow(ToolInputError);
  });
});
