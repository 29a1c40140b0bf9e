// The contract, checked from outside: schemathesis (PyPI, pinned; installed into
// .tools/ by scripts/install-schemathesis.sh, which npm test runs first) reads
// the gateway's GET /openapi.json, generates requests from it, valid and not,
// sends them to a real stack and checks every answer with all of its checks:
// no server error, statuses, content types, headers and bodies as documented,
// valid requests accepted and invalid ones refused, Allow on OPTIONS and 405,
// auth, resources after their creation and deletion (its stateful phase follows
// the links it infers between operations). Settings and why: fixtures/
// schemathesis.toml; hooks: fixtures/schemathesis-hooks.py.
//
// Two runs: the cases the document itself gives (the examples and coverage phases derive
// them from the document alone, the same every time: a fixed seed), then generated ones (the
// fuzzing and stateful phases) from a random seed, printed (CONTRACT_SEED repeats one): each CI
// run fuzzes every operation with inputs no earlier run sent, instead of sending one fixed
// seed's inputs again beside them (that second fuzzing pass cost about 100 s of the suite).
import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KEY_A, useStack } from './helpers';

// A guard against a hang only: the runs take minutes on two cores (docs/testing.md has the figures).
jest.setTimeout(20 * 60_000);
const ctx = useStack();
const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures');
const FIXED_SEED = 1;
/** At least this many generated cases per operation in each run. */
const EXAMPLES = 100;

let python: string;
let reports: string;

beforeAll(() => {
  // The test set-up's installer (scripts/test.sh runs it too): idempotent, prints the environment's python.
  const installed = spawnSync('bash', [path.join(ROOT, 'scripts/install-schemathesis.sh')], { encoding: 'utf8' });
  if (installed.status !== 0) throw new Error(`schemathesis could not be installed: ${installed.stderr.trim()}`);
  python = installed.stdout.trim().split('\n').pop()!;
  reports = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-'));
});
afterAll(() => fs.rmSync(reports, { recursive: true, force: true }));

interface Run {
  code: number | null;
  output: string;
  junit: string;
}

/** One schemathesis run against the stack's document; its JUnit report read back. */
function schemathesis(seed: number, phases: string): Promise<Run> {
  const junit = path.join(reports, `junit-${seed}.xml`);
  const args = [
    ...['-m', 'schemathesis.cli', '--config-file', path.join(FIXTURES, 'schemathesis.toml')],
    ...['run', `${ctx.stack().gatewayUrl}/openapi.json`, '--checks', 'all', '-H', `Authorization: Bearer ${KEY_A}`],
    ...['--seed', String(seed), '--max-examples', String(EXAMPLES), '--phases', phases],
    // No example database: it would live in this run's temporary folder and go with it, and keeping
    // it cost 40% of the fuzzing's CPU (same seed, same cases: 85 CPU-s with it, 49 without).
    ...['--generation-database', 'none'],
    // Two workers for two cores; the longest wait the API documents is ?wait=60, so 90 s is a hang.
    ...['--workers', '2', '--request-timeout', '90', '--report', 'junit', '--report-junit-path', junit, '--no-color'],
  ];
  const env = {
    ...process.env,
    SCHEMATHESIS_HOOKS: path.join(FIXTURES, 'schemathesis-hooks.py'),
    PYTHONDONTWRITEBYTECODE: '1',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { env, cwd: reports });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, output, junit: fs.existsSync(junit) ? fs.readFileSync(junit, 'utf8') : '' }),
    );
  });
}

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');

/** The report's counts, each operation it tested, and the text of every failure or error (cut to a readable length). */
function readReport(junit: string): { failures: number; errors: number; tested: string[]; problems: string[] } {
  const suite = /<testsuites [^>]*errors="(\d+)" failures="(\d+)"/.exec(junit);
  if (!suite) throw new Error(`no JUnit report:\n${junit.slice(0, 2000)}`);
  const tested = [...junit.matchAll(/<testcase name="([^"]*)"/g)].map((m) => unescape(m[1]));
  const problems = [...junit.matchAll(/<testcase name="([^"]*)"[^>]*>\s*<(failure|error)[^>]*>([\s\S]*?)<\/\2>/g)].map(
    ([, name, kind, text]) =>
      `${kind} in ${unescape(name)}:\n${unescape(text)
        .split('\n')
        .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
        .join('\n')
        .slice(0, 6000)}`,
  );
  return { failures: Number(suite[2]), errors: Number(suite[1]), tested, problems };
}

/** Every operation the document lists but its own GET /openapi.json (the document schemathesis reads, not one it tests). */
async function documentedOperations(): Promise<string[]> {
  const doc = (await (await fetch(`${ctx.stack().gatewayUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths)
    .flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`))
    .filter((op) => op !== 'GET /openapi.json')
    .sort();
}

async function expectNoFailures(seed: number, phases: string, repeat: string): Promise<void> {
  const started = Date.now();
  const run = await schemathesis(seed, phases);
  const report = readReport(run.junit);
  console.log(
    `schemathesis seed ${seed} (${phases}): ${report.tested.length} operations, ${report.failures} failures, ${report.errors} errors in ${((Date.now() - started) / 1000).toFixed(0)} s; ${repeat}`,
  );
  if (report.problems.length || run.code !== 0) {
    throw new Error(
      `schemathesis seed ${seed} (${phases}) exited ${run.code}: ${report.failures} failures, ${report.errors} errors (${repeat})\n\n${report.problems.join('\n\n')}\n\n${run.output.slice(-3000)}`,
    );
  }
  expect(report.tested.filter((t) => t !== 'Stateful tests').sort()).toEqual(await documentedOperations());
  if (phases.includes('stateful')) expect(report.tested).toContain('Stateful tests');
}

const engine = process.env.ENGINE ?? 'embedded';

test(`the document's own cases (examples and coverage, seed ${FIXED_SEED}): no failure of any check`, async () => {
  await expectNoFailures(
    FIXED_SEED,
    'examples,coverage',
    `repeat with: ENGINE=${engine} npx jest test/e2e/contract.e2e.test.ts -t 'own cases'`,
  );
});

// The contract is the gateway's, the same on both engines: this file runs on the embedded
// engine's pass only (test/setup/real-server-e2e.js).
test('generated cases from a random seed (fuzzing and stateful): no failure of any check', async () => {
  const seed = Number(process.env.CONTRACT_SEED ?? randomInt(1, 2 ** 31));
  await expectNoFailures(
    seed,
    'fuzzing,stateful',
    `repeat with: CONTRACT_SEED=${seed} ENGINE=${engine} npx jest test/e2e/contract.e2e.test.ts -t 'random seed'`,
  );
});
