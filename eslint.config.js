// Lint: TypeScript recommended rules, plus the sandbox line — workflow code may
// not import node builtins or I/O clients (it must stay deterministic).
const tseslint = require('typescript-eslint');

const forbiddenInWorkflows = [
  'node:*',
  'fs',
  'path',
  'crypto',
  'http',
  'https',
  'net',
  'child_process',
  'os',
  'openai',
  'ioredis',
  'pino',
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/worker',
  'prom-client',
];

/** The no-restricted-imports rule of service code: workflows/ for types and shared modules, and `extra`. */
function serviceImports(...extra) {
  const workflows = {
    regex: '(^|/)workflows(/(?!(definitions|types|run-events|tool-registry|failure-cause)$)[^/]+)?$',
    allowTypeImports: true,
    message:
      'service code imports from workflows/ only types, or the shared modules (definitions, types, run-events, tool-registry, failure-cause)',
  };
  return { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [workflows, ...extra] }] };
}

/** A room of src/ that may not import the rooms `others` by relative path (types too, unless `types`). */
function room(name, others, types = false) {
  return {
    regex: `^\\.{1,2}/(.*/)?(${others.join('|')})(/|$)`,
    allowTypeImports: types,
    message: `${name} does not import ${others.map((o) => `src/${o}/`).join(', ')}${types ? ' (types only)' : ''}`,
  };
}

module.exports = tseslint.config(
  // .tools/ holds the tests' Python environments (npm test may be creating them while eslint runs).
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'coverage/**',
      '.data/**',
      '.scratch/**',
      '.tools/**',
      '**/*.js',
      '!eslint.config.js',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-require-imports': 'off',
      'no-console': 'error',
    },
  },
  {
    // Size: a file holds one responsibility in at most 400 lines, a function does one job in at most 60.
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // A test file's describe and test callbacks are lists of cases, not functions that do work: the
    // function length rule is off there (the file length rule still holds). Test helpers (the other
    // files under test/) keep it.
    files: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    files: [
      'workflows/**/*.ts',
      'packages/embedded-temporal/test/**/workflows/**/*.ts',
      'test/e2e/**/workflows/**/*.ts',
      'test/cli/**/*workflows/**/*.ts',
      'bench/*workflows.ts',
    ],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            ...forbiddenInWorkflows.map((group) => ({
              group: [group],
              message: 'workflow code must stay deterministic: no I/O or node builtins here',
            })),
            // Activities and service code run outside the sandbox: workflows may know their types only.
            {
              group: ['**/activities', '**/activities/*', '**/src/*', '**/src/**'],
              allowTypeImports: true,
              message: 'import only types from activities and service code into workflows',
            },
          ],
        },
      ],
    },
  },
  {
    // Service code runs outside the sandbox and talks to workflows; it takes from workflows/ only
    // types and the modules shared on purpose: definitions (ids, signals, queries, updates), types
    // (the shapes and their pure helpers), run-events (the event builders), tool-registry (the
    // built-in tools a run may be offered) and failure-cause. Importing a workflow itself would load
    // every workflow into the gateway (and made the cycle agent-task → dag-run → dag-step).
    files: ['src/**/*.ts', 'activities/**/*.ts'],
    rules: serviceImports(),
  },
  // The rooms of src/ by process (docs/architecture.md, "Who imports what"): common/ is below the
  // processes, each process imports common/ and not another process's room; dev/ (the launcher,
  // the scripted model, the demo MCP server) may start anything. The activities run in the worker:
  // they import common/ like it (the API's run request, which they re-read a schedule's stored
  // request with, is a contract in common/contracts/). A later block replaces an earlier one's rule
  // for its files, so each room's block carries the workflows/ pattern too (serviceImports).
  { files: ['src/common/**/*.ts'], rules: serviceImports(room('common', ['gateway', 'worker', 'dev', 'cli'], true)) },
  { files: ['src/gateway/**/*.ts'], rules: serviceImports(room('the gateway', ['worker', 'dev', 'cli'])) },
  { files: ['src/worker/**/*.ts'], rules: serviceImports(room('the worker', ['gateway', 'dev', 'cli'])) },
  { files: ['src/cli/**/*.ts'], rules: serviceImports(room('the operator tools', ['gateway', 'dev'])) },
  { files: ['activities/**/*.ts'], rules: serviceImports(room('activities', ['gateway', 'dev', 'cli'])) },
  {
    // The client (client/) is a thin layer over fetch: it takes the service's types, never its code,
    // so it carries no runtime dependency on the gateway. The CLI's replay command talks to Temporal
    // with the replay tool's code, by design, and loads it with require().
    files: ['client/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/*',
                '**/src/**',
                '**/workflows',
                '**/workflows/*',
                '**/activities',
                '**/activities/*',
                'zod',
                '@temporalio/*',
              ],
              allowTypeImports: true,
              message: 'the client imports only types from the service (import type)',
            },
          ],
        },
      ],
    },
  },
  {
    // The web console runs in a browser: it reaches the service through the client (client/) and
    // takes the service's types only.
    files: ['console/src/**/*.ts', 'console/src/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*', '**/src/**', '**/workflows', '**/workflows/*', '**/activities', '**/activities/*'],
              allowTypeImports: true,
              message: 'the console imports only types from the service; it talks to it through client/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'packages/*/test/**/*.ts', 'packages/*/bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
