// The sandbox line is enforced by lint: workflow code may not import node
// builtins, I/O clients or activity implementations (types are fine).
import path from 'node:path';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

const root = path.resolve(__dirname, '../..');

// ESLint in one child process for the whole file (it loads its config with dynamic import, which
// jest's VM lacks): each probe is a line of JSON in, the rule ids it broke a line out. One process
// instead of one per probe: loading ESLint and typescript-eslint is about 2 CPU-seconds.
const SERVER = `
const { ESLint } = require('eslint');
const eslint = new ESLint();
let chain = Promise.resolve();
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { code, file } = JSON.parse(line);
  chain = chain.then(async () => {
    const [result] = await eslint.lintText(code, { filePath: file });
    process.stdout.write(JSON.stringify(result.messages.map((m) => m.ruleId)) + '\\n');
  });
});`;
let server: ChildProcessWithoutNullStreams;
const waiting: { resolve: (ids: string[]) => void; reject: (err: Error) => void }[] = [];
beforeAll(() => {
  server = spawn(process.execPath, ['-e', SERVER], { cwd: root });
  let out = '';
  let err = '';
  server.stdout.on('data', (d) => {
    out += d;
    for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
      waiting.shift()?.resolve(JSON.parse(out.slice(0, i)));
      out = out.slice(i + 1);
    }
  });
  server.stderr.on('data', (d) => (err += d));
  server.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`eslint exited ${code}: ${err}`));
  });
});
afterAll(() => server.stdin.end());

/** The rule ids lint reports for `code` as the file `file`. */
const lint = (code: string, file = 'workflows/probe.ts') =>
  new Promise<string[]>((resolve, reject) => {
    waiting.push({ resolve, reject });
    server.stdin.write(JSON.stringify({ code, file }) + '\n');
  });

test.each([
  ["import fs from 'node:fs';\nexport const x = fs;"],
  ["import Redis from 'ioredis';\nexport const x = Redis;"],
  ["import OpenAI from 'openai';\nexport const x = OpenAI;"],
  ["import { createActivities } from '../activities';\nexport const x = createActivities;"],
  ["import { loadConfig } from '../src/common/config';\nexport const x = loadConfig;"],
  ["import { Counter } from 'prom-client';\nexport const x = Counter;"],
])('workflow code may not import: %s', async (code) => {
  expect(await lint(code)).toContain('@typescript-eslint/no-restricted-imports');
});

test('type-only imports of activities are allowed in workflow code', async () => {
  expect(await lint("import type { Activities } from '../activities';\nexport type X = Activities;")).toEqual([]);
});

test('the same imports are fine outside workflows/', async () => {
  expect(await lint("import fs from 'node:fs';\nexport const x = fs;", 'activities/probe.ts')).toEqual([]);
});

// The rooms of src/ (docs/architecture.md, "Who imports what"): each file below may not import the
// code of another room; types are allowed where the rule says so.
test.each([
  ['src/common/probe.ts', "import { createApp } from '../gateway/app';\nexport const x = createApp;"],
  ['src/common/metrics/probe.ts', "import { main } from '../../worker/main';\nexport const x = main;"],
  ['src/gateway/probe.ts', "import { startStack } from '../dev/launcher/stack';\nexport const x = startStack;"],
  ['src/gateway/services/probe.ts', "import type { X } from '../../worker/main';\nexport type Y = X;"],
  ['src/worker/probe.ts', "import { createApp } from '../gateway/app';\nexport const x = createApp;"],
  ['src/cli/probe.ts', "import { createApp } from '../gateway/app';\nexport const x = createApp;"],
  ['activities/probe.ts', "import { createApp } from '../src/gateway/app';\nexport const x = createApp;"],
  ['activities/probe.ts', "import { startStack } from '../src/dev/launcher/stack';\nexport const x = startStack;"],
  // No gateway module is an exception any more: the run request they re-read is in common/contracts/.
  ['activities/probe.ts', "import { TASK_ID } from '../src/gateway/schemas/request';\nexport const x = TASK_ID;"],
  [
    'activities/probe.ts',
    "import type { RunRequest } from '../src/gateway/schemas/request';\nexport type X = RunRequest;",
  ],
])('%s may not import another room: %s', async (file, code) => {
  expect(await lint(code, file)).toContain('@typescript-eslint/no-restricted-imports');
});

test.each([
  ['src/common/probe.ts', "import type { RunRequest } from '../gateway/schemas/request';\nexport type X = RunRequest;"],
  ['src/gateway/probe.ts', "import { loadConfig } from '../common/config';\nexport const x = loadConfig;"],
  ['src/cli/probe.ts', "import { workflowBundle } from '../worker/workflow-bundle';\nexport const x = workflowBundle;"],
  [
    'activities/probe.ts',
    "import { runRequestSchema } from '../src/common/contracts/run-request';\nexport const x = runRequestSchema;",
  ],
  ['src/dev/probe.ts', "import { createApp } from '../gateway/app';\nexport const x = createApp;"],
])('%s may import: %s', async (file, code) => {
  expect(await lint(code, file)).toEqual([]);
});
