// The worker's workflow bundle cache: built once per content, read back after,
// and a change to any workflow file, the entry module or the interceptors bundled in is a new
// key, so a worker never runs a stale bundle.
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { cacheKey, workflowBundle, workflowsFolder } from '../../src/worker/workflow-bundle';

// A unit test, but a heavy one: it builds a workflow bundle with webpack (3-4 s alone on two cores); more than the unit project's 10 s.
jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '../..');

const logger = pino({ level: 'silent' });
let dir: string;
let cache: string;

beforeAll(() => {
  // Inside the repository (the bundler resolves the SDK's own modules from the workflows' folder), not under node_modules (not compiled there).
  fs.mkdirSync(path.join(ROOT, '.data'), { recursive: true });
  dir = fs.mkdtempSync(path.join(ROOT, '.data', 'wf-bundle-test-'));
  cache = path.join(dir, 'cache');
  fs.mkdirSync(path.join(dir, 'wf'));
  fs.writeFileSync(path.join(dir, 'wf', 'index.ts'), "export { greet } from './greet';\n");
  fs.writeFileSync(
    path.join(dir, 'wf', 'greet.ts'),
    "export async function greet(): Promise<string> { return 'hello'; }\n",
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a bundle is built once and then read from the cache', async () => {
  const inputs = { workflowsPath: path.join(dir, 'wf', 'index.ts'), interceptorModules: [] };
  const first = await workflowBundle(inputs, logger, cache);
  expect(first.code).toContain("'hello'");
  const [file] = fs.readdirSync(cache);
  expect(file).toBe(`workflows-${cacheKey(inputs)}.json`);
  // What is read back is the file's content, not a new build.
  fs.writeFileSync(path.join(cache, file), JSON.stringify({ code: 'cached code', sourceMap: '{}' }));
  expect((await workflowBundle(inputs, logger, cache)).code).toBe('cached code');
}, 60_000);

test('any change to a workflow file, or to the interceptors, is another key', () => {
  const inputs = { workflowsPath: path.join(dir, 'wf', 'index.ts'), interceptorModules: [] };
  const before = cacheKey(inputs);
  expect(cacheKey(inputs)).toBe(before);
  expect(cacheKey({ ...inputs, interceptorModules: ['/some/interceptors'] })).not.toBe(before);
  // Another entry module of the same folder bundles other workflows.
  expect(cacheKey({ ...inputs, workflowsPath: path.join(dir, 'wf', 'greet.ts') })).not.toBe(before);
  fs.appendFileSync(path.join(dir, 'wf', 'greet.ts'), '// a comment is a change too\n');
  expect(cacheKey(inputs)).not.toBe(before);
});

test("a workflows module elsewhere (a fixture, the replay CLI's --workflows) is another key when the service's workflows change: it may re-export them", () => {
  const inputs = { workflowsPath: path.join(dir, 'wf', 'index.ts'), interceptorModules: [] };
  const before = cacheKey(inputs);
  // A file added to workflows/ (and taken away again): the key follows it.
  const extra = path.join(ROOT, 'workflows', `.bundle-key-test-${process.pid}.ts`);
  fs.writeFileSync(extra, '// a change to the service workflows\n');
  try {
    expect(cacheKey(inputs)).not.toBe(before);
  } finally {
    fs.rmSync(extra, { force: true });
  }
  expect(cacheKey(inputs)).toBe(before);
});

test('a workflows path that names a folder keys that folder, not its parent (which would be the repository, node_modules and all)', () => {
  expect(workflowsFolder(path.join(ROOT, 'workflows'))).toBe(path.join(ROOT, 'workflows'));
  expect(workflowsFolder(path.join(ROOT, 'workflows', 'index.ts'))).toBe(path.join(ROOT, 'workflows'));
  // The folder and its index module bundle the same workflows: one key for both is not required,
  // but each must follow a change to the folder's files only.
  const byFolder = { workflowsPath: path.join(dir, 'wf'), interceptorModules: [] };
  const before = cacheKey(byFolder);
  fs.writeFileSync(path.join(dir, 'outside.ts'), '// beside the folder, not in it\n');
  try {
    expect(cacheKey(byFolder)).toBe(before);
  } finally {
    fs.rmSync(path.join(dir, 'outside.ts'), { force: true });
  }
  fs.appendFileSync(path.join(dir, 'wf', 'greet.ts'), '// in the folder: a change\n');
  expect(cacheKey(byFolder)).not.toBe(before);
});
