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
])('%s may not import another room: %s', async (file, code) => {
  expect(await lint(code, file)).toContain('@typescript-eslint/no-restricted-imports');
});

test.each([
  ['src/common/probe.ts', "import type { RunRequest } from '../gateway/schemas/request';\nexport type X = RunRequest;"],
  ['src/gateway/probe.ts', "import { loadConfig } from '../common/config';\nexport const x = loadConfig;"],
  ['src/cli/probe.ts', "import { workflowBundle } from '../worker/workflow-bundle';\nexport const x = workflowBundle;"],
  [
    'activities/probe.ts',
    "import { runRequestSchema } from '../src/gateway/schemas/request';\nexport const x = runRequestSchema;",
  ],
  ['src/dev/probe.ts', "import { createApp } from '../gateway/app';\nexport const x = createApp;"],
])('%s may import: %s', async (file, code) => {
  expect(await lint(code, file)).toEqual([]);
});
