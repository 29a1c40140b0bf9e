// What a command running beside the editor, search or an upload could try (a DAG's parallel
// steps of one session, an upload while a command runs): swap a folder of the workspace for a
// link to a host folder, again and again, while the editor reads and writes through it and grep
// searches it. Each call either works on the workspace's own folder or fails; none reads the host
// file's canary, and nothing is ever written in the host folder.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runEditor } from '../../../activities/computer/editor';
import { runGrep } from '../../../activities/computer/search';
import type { SessionWorkspace } from '../../../src/common/workspaces/layout';

const CANARY = 'HOST-CANARY-7f3a';
let base: string;
let ws: SessionWorkspace;
let host: string;
const quota = { maxBytes: 1 << 30, maxFiles: 10_000 };

beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'races-'));
  ws = { root: base, files: path.join(base, 'files'), state: path.join(base, 'state') };
  host = path.join(base, 'host');
  await fs.mkdir(path.join(ws.files, 'src'), { recursive: true });
  await fs.mkdir(ws.state);
  await fs.writeFile(path.join(ws.files, 'src', 'a.txt'), 'workspace text\n');
  await fs.mkdir(host);
  await fs.writeFile(path.join(host, 'a.txt'), `${CANARY}\n`);
});
afterEach(() => fs.rm(base, { recursive: true, force: true }));

/** Swaps src for a link to the host folder and back until stopped; how many swaps it made. */
function swapper(): { stop(): Promise<number> } {
  let running = true;
  let swaps = 0;
  const src = path.join(ws.files, 'src');
  const aside = path.join(ws.files, '.src-aside');
  const loop = (async () => {
    while (running) {
      await fs.rename(src, aside);
      // The editor's create may have made src again in the moment it was missing: then no link.
      await fs.symlink(host, src).catch(() => undefined);
      await new Promise((r) => setImmediate(r));
      // A link is removed as a link (never followed); a folder the editor made, with what it holds.
      await fs.rm(src, { recursive: true, force: true });
      await fs.rename(aside, src);
      swaps++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return swaps;
    },
  };
}

/** The text of a call, or its error's message (a call that fails is fine: it must not leak). */
const outcome = (p: Promise<{ text: string }>) => p.then((r) => r.text).catch((err: Error) => err.message);

test('the editor, viewing and editing through a folder swapped for a link meanwhile, never reads or writes the host folder', async () => {
  const s = swapper();
  const seen: string[] = [];
  for (let i = 0; i < 150; i++) {
    seen.push(await outcome(runEditor({ command: 'view', path: 'src/a.txt' }, ws, quota)));
    seen.push(await outcome(runEditor({ command: 'view', path: 'src' }, ws, quota)));
    seen.push(
      await outcome(runEditor({ command: 'create', path: `src/new-${i}.txt`, file_text: 'created\n' }, ws, quota)),
    );
  }
  const swaps = await s.stop();
  expect(swaps).toBeGreaterThan(10);
  for (const text of seen) expect(text).not.toContain(CANARY);
  // Some calls met the link: they were refused, never followed out.
  expect(seen.some((t) => t.includes('workspace text'))).toBe(true);
  expect(await fs.readdir(host)).toEqual(['a.txt']);
  expect(await fs.readFile(path.join(host, 'a.txt'), 'utf8')).toBe(`${CANARY}\n`);
});

test('grep of a folder and of one file, swapped for a link meanwhile, never reads the host folder', async () => {
  const s = swapper();
  const seen: string[] = [];
  for (let i = 0; i < 60; i++) {
    seen.push(await outcome(runGrep({ pattern: 'CANARY|workspace', path: 'src' }, ws)));
    seen.push(await outcome(runGrep({ pattern: 'CANARY|workspace', path: 'src/a.txt' }, ws)));
  }
  const swaps = await s.stop();
  expect(swaps).toBeGreaterThan(5);
  for (const text of seen) expect(text).not.toContain(CANARY);
  expect(seen.some((t) => t.includes('workspace text'))).toBe(true);
});
