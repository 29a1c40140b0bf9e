// The glob and grep tools with the real ripgrep (a child process, hence the e2e project) over a
// real workspace folder: what the model reads (sorted, workspace-relative, cut with a count of
// the rest), hidden and ignored files found, nothing of a link leading out (/etc) ever shown,
// paths out of the workspace refused, rg's refusals passed on, and a search killed at its limit.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_CHARS, runGlob, runGrep, type SearchOptions } from '../../../activities/computer/search';
import { ToolInputError } from '../../../activities/tools/builtin';
import { sessionWorkspace, type SessionWorkspace } from '../../../src/common/workspaces/layout';

let dir: string;
let ws: SessionWorkspace;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'search-'));
  ws = sessionWorkspace(dir, 'acct', 'sess');
  await fs.mkdir(ws.files, { recursive: true });
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const put = async (rel: string, content: string) => {
  await fs.mkdir(path.dirname(path.join(ws.files, rel)), { recursive: true });
  await fs.writeFile(path.join(ws.files, rel), content);
};
const glob = async (args: Record<string, unknown>, options?: SearchOptions) => (await runGlob(args, ws, options)).text;
const grep = async (args: Record<string, unknown>, options?: SearchOptions) => (await runGrep(args, ws, options)).text;
/** The result's lines after its first (the header), less the notes in brackets. */
const listed = (text: string) =>
  text
    .split('\n')
    .slice(1)
    .filter((l) => l && !l.startsWith('['));

describe('glob', () => {
  beforeEach(async () => {
    await put('src/main.py', '');
    await put('src/lib/util.py', '');
    await put('src/lib/util.ts', '');
    await put('README.md', '');
    await put('.config/settings.py', '');
    await put('build/out.py', '');
    await put('.gitignore', 'build/\n');
  });

  test('paths matching, sorted, hidden and ignored ones included, relative to /workspace', async () => {
    const text = await glob({ pattern: '*.py' });
    expect(text).toBe(
      '4 files match `*.py` in /workspace (paths relative to /workspace):\n' +
        '.config/settings.py\nbuild/out.py\nsrc/lib/util.py\nsrc/main.py\n',
    );
  });

  test('a path narrows the search; the pattern is matched below it, or given as the agent sees paths', async () => {
    expect(listed(await glob({ pattern: 'lib/*', path: 'src' }))).toEqual(['src/lib/util.py', 'src/lib/util.ts']);
    expect(listed(await glob({ pattern: '/workspace/src/**/*.ts' }))).toEqual(['src/lib/util.ts']);
    expect(listed(await glob({ pattern: '/workspace/src/lib/*.py', path: '/workspace/src' }))).toEqual([
      'src/lib/util.py',
    ]);
    await expect(runGlob({ pattern: '/workspace/build/*', path: 'src' }, ws)).rejects.toThrow(
      /not under the folder searched \(\/workspace\/src\)/,
    );
  });

  test('no match, and a workspace folder not made yet, say so', async () => {
    expect(await glob({ pattern: '*.rs' })).toBe('No files match `*.rs` in /workspace.\n');
    await fs.rm(ws.files, { recursive: true });
    expect(await glob({ pattern: '*' })).toBe('No files match `*` in /workspace.\n');
  });

  test('a pattern that looks like a flag is a pattern', async () => {
    await put('--version', '');
    expect(listed(await glob({ pattern: '--version' }))).toEqual(['--version']);
  });

  test('a bad glob is an error result with rg’s message', async () => {
    await expect(runGlob({ pattern: 'src/[a' }, ws)).rejects.toThrow(ToolInputError);
    await expect(runGlob({ pattern: 'src/[a' }, ws)).rejects.toThrow(/unclosed character class/);
  });

  test('over 1,000 paths: the first 1,000 in order, and how many more', async () => {
    for (let i = 0; i < 1050; i++) await put(`many/f${String(i).padStart(4, '0')}.txt`, '');
    const text = await glob({ pattern: 'many/*.txt' });
    const paths = listed(text);
    expect(paths).toHaveLength(1000);
    expect(paths[0]).toBe('many/f0000.txt');
    expect(paths[999]).toBe('many/f0999.txt');
    expect(text).toMatch(/^1050 files match/);
    expect(text).toContain('[50 more not shown: narrow the pattern or the path.]');
  });
});

describe('grep', () => {
  beforeEach(async () => {
    await put('b.py', 'import os\nTODO: b\n');
    await put('a/z.py', 'x = 1\n# todo later\nTODO: z\n');
    await put('.hidden/notes.txt', 'TODO: hidden\n');
    await put('a/app.ts', 'const TODO = 1;\n');
  });

  test('path:line:text, sorted by path then line, hidden files included', async () => {
    expect(await grep({ pattern: 'TODO' })).toBe(
      '4 matches for `TODO` in /workspace (path:line:text, paths relative to /workspace):\n' +
        '.hidden/notes.txt:1:TODO: hidden\na/app.ts:1:const TODO = 1;\na/z.py:3:TODO: z\nb.py:2:TODO: b\n',
    );
  });

  test('ignore_case, a glob, a folder or one file', async () => {
    expect(listed(await grep({ pattern: 'todo', ignore_case: true, path: 'a' }))).toEqual([
      'a/app.ts:1:const TODO = 1;',
      'a/z.py:2:# todo later',
      'a/z.py:3:TODO: z',
    ]);
    expect(listed(await grep({ pattern: 'todo' }))).toEqual(['a/z.py:2:# todo later']);
    expect(listed(await grep({ pattern: 'TODO', glob: '*.py' }))).toEqual(['a/z.py:3:TODO: z', 'b.py:2:TODO: b']);
    expect(await grep({ pattern: '^x', path: '/workspace/a/z.py' })).toBe(
      '1 match for `^x` in /workspace/a/z.py (path:line:text, paths relative to /workspace):\na/z.py:1:x = 1\n',
    );
  });

  test('no match says so', async () => {
    expect(await grep({ pattern: 'nowhere-to-be-found' })).toBe(
      'No matches for `nowhere-to-be-found` in /workspace.\n',
    );
  });

  test('a pattern that looks like a flag is searched for', async () => {
    await put('cmd.sh', 'rg --files -L\n');
    expect(listed(await grep({ pattern: '--files' }))).toEqual(['cmd.sh:1:rg --files -L']);
  });

  test('a bad regex is an error result with rg’s message', async () => {
    await expect(runGrep({ pattern: 'foo(' }, ws)).rejects.toThrow(ToolInputError);
    await expect(runGrep({ pattern: 'foo(' }, ws)).rejects.toThrow(/regex parse error[\s\S]*unclosed group/);
  });

  test('over 500 matches: the first 500, and how many more', async () => {
    await put('big.txt', Array.from({ length: 620 }, (_, i) => `hit ${i + 1}`).join('\n') + '\n');
    const text = await grep({ pattern: 'hit', path: 'big.txt' });
    const lines = listed(text);
    expect(lines).toHaveLength(500);
    expect(lines[499]).toBe('big.txt:500:hit 500');
    expect(text).toContain('[120 more not shown: narrow the pattern, the path or the glob.]');
  });

  test('long lines: each cut, and the whole cut near 30,000 characters', async () => {
    await put('wide.txt', Array.from({ length: 200 }, (_, i) => `hit ${i} ${'w'.repeat(400)}`).join('\n') + '\n');
    await put('min.js', `var hit=${'1'.repeat(5000)};\n`);
    const text = await grep({ pattern: 'hit' });
    expect(text).toContain('min.js:1:var hit=1111');
    expect(text).toContain('[... omitted end of long line]');
    expect(text.length).toBeLessThan(MAX_CHARS + 1000);
    const shown = listed(text).length;
    expect(shown).toBeLessThan(201);
    expect(text).toContain(`[${201 - shown} more not shown`);
  });
});

describe('the workspace, and only it', () => {
  beforeEach(async () => {
    await put('mine.txt', 'no secrets here\n');
    await fs.symlink('/etc', path.join(ws.files, 'etc'));
    await fs.symlink('/etc/passwd', path.join(ws.files, 'passwd'));
  });

  test('a link to /etc is not followed: /etc/passwd is neither found nor listed', async () => {
    expect(await grep({ pattern: 'root:' })).toBe('No matches for `root:` in /workspace.\n');
    expect(await glob({ pattern: '**/passwd' })).toBe('No files match `**/passwd` in /workspace.\n');
    expect(listed(await glob({ pattern: '**' }))).toEqual(['mine.txt']);
  });

  test.each([['etc'], ['etc/passwd'], ['passwd'], ['../'], ['/etc'], ['/workspace/../state']])(
    'the path %j is refused',
    async (name) => {
      await expect(runGrep({ pattern: 'root', path: name }, ws)).rejects.toThrow(ToolInputError);
      await expect(runGlob({ pattern: '*', path: name }, ws)).rejects.toThrow(ToolInputError);
    },
  );

  test('missing paths, a file where a folder is needed, and bad arguments are error results', async () => {
    await expect(runGrep({ pattern: 'x', path: 'nope' }, ws)).rejects.toThrow(
      'The path /workspace/nope does not exist.',
    );
    await expect(runGlob({ pattern: '*', path: 'mine.txt' }, ws)).rejects.toThrow('is not a folder');
    await expect(runGrep({ pattern: '' }, ws)).rejects.toThrow(/`pattern` \(a non-empty string\) is required/);
    await expect(runGrep({ pattern: 'x', ignore_case: 'yes' }, ws)).rejects.toThrow(/true or false/);
    await expect(runGlob({ pattern: '*', regex: true }, ws)).rejects.toThrow(/Unknown parameter\(s\): regex/);
  });
});

describe('limits', () => {
  // Ten megabytes of matching lines cannot pass rg's pipe before a 1 ms limit has passed: the
  // search is stopped at its limit (the mechanism shown, not a speed).
  beforeEach(() => put('huge.txt', `${'hit\n'.repeat(2_500_000)}`));

  test('a search at its time limit is stopped and answers what it found', async () => {
    const text = await grep({ pattern: 'hit' }, { timeoutMs: 1 });
    expect(text).toMatch(/^At least \d+ matches/);
    expect(text).toContain('[The search was stopped after its time limit');
  });

  test('a cancelled search is stopped and rejects with the reason', async () => {
    const ac = new AbortController();
    const search = grep({ pattern: 'hit' }, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('task cancelled')), 1);
    await expect(search).rejects.toThrow('task cancelled');
  });
});
