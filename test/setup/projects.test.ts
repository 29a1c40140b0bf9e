// The projects of jest.config.js: every test file belongs to exactly one kind, and the list
// of e2e files that run again on the real Temporal dev server names files that exist (a
// rename would otherwise drop a file from that pass without a word).
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const realServerE2e: string[] = require('./real-server-e2e');
const embeddedOnlyEngine: string[] = require('./embedded-only-engine');

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f));
}

test('each entry of the real-server e2e list is an e2e test file', () => {
  for (const entry of realServerE2e) expect(fs.existsSync(path.join(ROOT, 'test', `${entry}.e2e.test.ts`))).toBe(true);
});

test('each entry of the embedded-only engine list is an engine test file', () => {
  for (const entry of embeddedOnlyEngine) expect(fs.existsSync(path.join(ROOT, `${entry}.engine.test.ts`))).toBe(true);
});

test('the list has no entry twice', () => {
  expect(new Set(realServerE2e).size).toBe(realServerE2e.length);
});

test('every test file of test/e2e/ is an e2e test (it starts the real processes)', () => {
  const wrong = testFiles(path.join(ROOT, 'test', 'e2e')).filter((f) => !f.endsWith('.e2e.test.ts'));
  expect(wrong).toEqual([]);
});

test('the projects run on each engine TEST_ENGINES names, the unit project once', () => {
  const load = (engines: string) => {
    const before = process.env.TEST_ENGINES;
    process.env.TEST_ENGINES = engines;
    try {
      let config: { projects: { displayName: string }[] } = { projects: [] };
      jest.isolateModules(() => (config = require('../../jest.config.js')));
      return config.projects.map((p) => p.displayName);
    } finally {
      process.env.TEST_ENGINES = before;
    }
  };
  expect(load('embedded')).toEqual(['unit', 'engine', 'e2e']);
  expect(load('embedded temporal-cli')).toEqual([
    'unit',
    'engine · embedded',
    'e2e · embedded',
    'engine · temporal-cli',
    'e2e · temporal-cli',
  ]);
});
