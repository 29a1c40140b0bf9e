// A file built once by those who need it together: one build, the others wait and read it; a
// lock its process left behind is taken over, and a failed build lets the next caller try.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtOnce } from '../../src/worker/built-once';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'built-once-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A build that counts its calls and ends when the test says. */
function gatedBuild(content: string) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const build = jest.fn(async () => {
    await gate;
    return content;
  });
  return { build, release };
}

test('callers needing the file together run one build; later callers read the file', async () => {
  const file = path.join(dir, 'sub', 'thing.json');
  const { build, release } = gatedBuild('built');
  const all = Promise.all([1, 2, 3].map(() => builtOnce(file, build, { pollMs: 5 })));
  await new Promise((r) => setTimeout(r, 50));
  release();
  expect(await all).toEqual(['built', 'built', 'built']);
  expect(build).toHaveBeenCalledTimes(1);
  expect(fs.readFileSync(file, 'utf8')).toBe('built');
  expect(fs.existsSync(`${file}.lock`)).toBe(false);
  const again = jest.fn(async () => 'rebuilt');
  expect(await builtOnce(file, again)).toBe('built');
  expect(again).not.toHaveBeenCalled();
});

test('a lock whose process is gone is taken over', async () => {
  const file = path.join(dir, 'thing.json');
  fs.writeFileSync(`${file}.lock`, String(deadPid()));
  const build = jest.fn(async () => 'mine');
  expect(await builtOnce(file, build, { pollMs: 5 })).toBe('mine');
  expect(build).toHaveBeenCalledTimes(1);
  expect(fs.existsSync(`${file}.lock`)).toBe(false);
});

test('a fresh lock without a pid (its maker is writing it) is waited on, and its file read', async () => {
  const file = path.join(dir, 'thing.json');
  fs.writeFileSync(`${file}.lock`, '');
  const build = jest.fn(async () => 'mine');
  const result = builtOnce(file, build, { pollMs: 5 });
  await new Promise((r) => setTimeout(r, 50));
  fs.writeFileSync(file, 'theirs');
  expect(await result).toBe('theirs');
  expect(build).not.toHaveBeenCalled();
});

test('a failed build releases the lock: the next caller builds', async () => {
  const file = path.join(dir, 'thing.json');
  await expect(builtOnce(file, async () => Promise.reject(new Error('webpack failed')))).rejects.toThrow(
    'webpack failed',
  );
  expect(fs.existsSync(`${file}.lock`)).toBe(false);
  expect(await builtOnce(file, async () => 'second')).toBe('second');
});

test('a live builder that takes too long is not waited on for ever: the caller builds too', async () => {
  const file = path.join(dir, 'thing.json');
  // Held by this very process, which is alive and never finishes.
  fs.writeFileSync(`${file}.lock`, String(process.pid));
  const build = jest.fn(async () => 'mine');
  expect(await builtOnce(file, build, { pollMs: 5, maxWaitMs: 50 })).toBe('mine');
  expect(build).toHaveBeenCalledTimes(1);
  // The lock is the other builder's: left for it to remove.
  expect(fs.existsSync(`${file}.lock`)).toBe(true);
});

test('a folder where nothing can be written: built every time, never waited on', async () => {
  const blocker = path.join(dir, 'not-a-folder');
  fs.writeFileSync(blocker, '');
  const build = jest.fn(async () => 'uncached');
  expect(await builtOnce(path.join(blocker, 'thing.json'), build)).toBe('uncached');
  expect(await builtOnce(path.join(blocker, 'thing.json'), build)).toBe('uncached');
  expect(build).toHaveBeenCalledTimes(2);
});

/** A pid no process has now. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}
