// The sandbox line is enforced by lint: workflow code may not import node
// builtins, I/O clients or activity implementations (types are fine).
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.resolve(__dirname, '../..');
// The CLI in a child process: ESLint loads its config with dynamic import, which jest's VM lacks.
const lint = async (code: string, file = 'workflows/probe.ts') => {
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'],
    { cwd: root, input: code, encoding: 'utf8' },
  );
  const [result] = JSON.parse(r.stdout) as { messages: { ruleId: string }[] }[];
  return result.messages.map((m) => m.ruleId);
};

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
