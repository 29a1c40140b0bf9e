// `npm start` as a new user sees it: a banner naming the model, the engine and
// where the logs are; every process's log lines on the terminal, prefixed by
// process; the same lines as JSON in the data folder's logs/; and every example
// of the README and of the docs pages, run against it.
import { spawn, spawnSync, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../../../src/dev/launcher/processes';
import { launcherWait } from './launcher-wait';
import { readmeExamples, retarget } from './readme-examples';
import { TS_LOADER_ARGS } from '../../../src/common/ts-loader';

let proc: ChildProcess;
let out = '';
let dataDir: string;
let gatewayUrl: string;
let ports: { gateway: number; demoMcp: number; demoWeb: number };

/** Waits for `what` in npm start's output; an exit of npm start ends the wait at once. The error ends with the output's tail. */
const waitFor = launcherWait(
  () => proc,
  () => out,
);

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-'));
  const [port, temporalPort, mcpPort, metricsPort, webPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  gatewayUrl = `http://127.0.0.1:${port}`;
  ports = { gateway: port, demoMcp: mcpPort, demoWeb: webPort };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    DEMO_MCP_PORT: String(mcpPort),
    DEMO_WEB_PORT: String(webPort),
    WORKER_METRICS_PORT: String(metricsPort),
    ENGINE: 'embedded',
    NO_COLOR: '1',
  };
  for (const k of [
    'API_KEYS',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'LOG_LEVEL',
    'LOG_FORMAT',
    'PAYLOAD_KEYS',
  ])
    delete env[k];
  proc = spawn(process.execPath, [...TS_LOADER_ARGS, path.join(ROOT, 'src/dev/launcher/main.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor('the ready banner', () => out.includes('Agent Execution Service ready'), 90_000);
}, 120_000);

afterAll(async () => {
  if (proc.exitCode === null) {
    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('the banner names the model in use, the engine and where the logs are', () => {
  expect(out).toMatch(/Model: the built-in scripted model at http:\/\/127\.0\.0\.1:\d+/);
  expect(out).toContain('ENGINE=embedded');
  expect(out).toContain('Web UI: none with the embedded engine');
  expect(out).toMatch(/Logs: .*logs\/<process>\.log/);
});

test("a request shows on the terminal as the gateway's line and the worker's task lines, and lands in logs/ as JSON", async () => {
  const res = await fetch(`${gatewayUrl}/`, {
    method: 'POST',
    headers: { authorization: 'Bearer dev-key', 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'hello' }),
  });
  expect(res.status).toBe(200);
  const taskId = res.headers.get('x-task-id')!;
  // Pretty lines: time, process, level, message, fields.
  const requestLine = new RegExp(
    `^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} gateway\\s+INFO\\s+request method=POST path=/ status=200 ms=[\\d.]+ task_id=${taskId} account=dev$`,
    'm',
  );
  await waitFor('the request line', () => requestLine.test(out));
  await waitFor("the worker's end of the task", () =>
    new RegExp(`worker\\s+INFO\\s+task completed .*task_id=${taskId}`).test(out),
  );
  expect(out).toMatch(new RegExp(`worker\\s+INFO\\s+task running .*task_id=${taskId}`));
  const lines = fs
    .readFileSync(path.join(dataDir, 'logs', 'gateway.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  expect(lines.find((l) => l.msg === 'request' && l.task_id === taskId)).toMatchObject({
    level: 'info',
    name: 'gateway',
    method: 'POST',
    path: '/',
    status: 200,
    account: 'dev',
  });
  expect(fs.existsSync(path.join(dataDir, 'logs', 'worker.log'))).toBe(true);
  // The key is in the banner's example (by design), never in a log.
  for (const file of fs.readdirSync(path.join(dataDir, 'logs')))
    expect({ file, key: fs.readFileSync(path.join(dataDir, 'logs', file), 'utf8').includes('dev-key') }).toEqual({
      file,
      key: false,
    });
});

// The pages whose ```bash and ```ts blocks are run against the service: the README
// and every page of docs/ (a page without such blocks adds nothing), but these:
const NOT_RUN: Record<string, string> = {
  // The engine's page (its package's README, outside docs/, so not among the pages below
  // anyway; named so that the choice is on record): its blocks start the engine itself
  // (bin/temporal-dev, `ENGINE=temporal-cli npm start`), create SDK test environments and run
  // jest suites: for those who work on the engine, not requests to a running service.
  'packages/embedded-temporal/README.md': 'engine commands and test runs',
};
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
].filter((p) => !(p in NOT_RUN));
/** Pages that must keep examples run: what a user reads to learn the API and run the service. */
const AT_LEAST: Record<string, number> = { 'README.md': 8, 'docs/api.md': 5, 'docs/operations.md': 1 };

describe("the README's and the docs' examples", () => {
  const examples = PAGES.flatMap((page) => readmeExamples(path.join(ROOT, page)).map((e) => ({ ...e, page })));
  const env = () => ({ ...process.env, AGENT_URL: gatewayUrl, NO_COLOR: '1' });

  test('there are examples, and each one not run says why', () => {
    for (const [page, n] of Object.entries(AT_LEAST))
      expect({ page, run: examples.filter((e) => e.page === page && !e.skip).length >= n }).toEqual({
        page,
        run: true,
      });
    for (const e of examples.filter((x) => x.skip)) expect(e.skip!.length).toBeGreaterThan(10);
  });

  test.each(examples.filter((e) => !e.skip).map((e) => [`${e.lang} at ${e.page}:${e.line}`, e] as const))(
    '%s runs',
    (_name, example) => {
      const code = retarget(example.code, ports);
      let r;
      if (example.lang === 'bash') {
        r = spawnSync('bash', ['-euo', 'pipefail', '-c', code], {
          cwd: ROOT,
          env: env(),
          encoding: 'utf8',
          timeout: 60_000,
        });
      } else {
        // As the README says: the code as a .ts file in the repository's folder, run with `npx tsx <file>`.
        const file = `.readme-example-${path.basename(example.page, '.md')}-${example.line}.ts`;
        fs.writeFileSync(path.join(ROOT, file), code);
        try {
          r = spawnSync('npx', ['tsx', file], { cwd: ROOT, env: env(), encoding: 'utf8', timeout: 60_000 });
        } finally {
          fs.rmSync(path.join(ROOT, file), { force: true });
        }
      }
      const shown = `exit ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      expect({ code, ok: r.status === 0 && r.stdout.trim().length > 0 }).toEqual({ code, ok: true });
      // No answer is an error document (an HTTP error's body starts with {"error": ...}).
      expect({ code, errorBody: /^\{"error":/m.test(r.stdout) ? shown : null }).toEqual({ code, errorBody: null });
      if (example.expect) expect(r.stdout).toContain(example.expect);
    },
    90_000,
  );
});

test('a process that dies is started again by npm start, which says so and goes on serving', async () => {
  const ps = spawnSync('ps', ['--ppid', String(proc.pid), '-o', 'pid=,args='], { encoding: 'utf8' }).stdout;
  const gateway = ps.split('\n').find((l) => l.includes('src/gateway/main.ts'));
  expect(gateway).toBeDefined();
  process.kill(Number(gateway!.trim().split(/\s+/)[0]), 'SIGKILL');
  await waitFor('the restart', () => out.includes('npm start: gateway is running again'));
  expect(out).toMatch(
    /npm start: gateway was killed by SIGKILL; restarting it in \d+ ms \(restart 1 of at most 5 a minute\)/,
  );
  const res = await fetch(`${gatewayUrl}/`, {
    method: 'POST',
    headers: { authorization: 'Bearer dev-key', 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'still here' }),
  });
  expect(res.status).toBe(200);
  expect(proc.exitCode).toBeNull();
}, 60_000);

test('Ctrl-C stops everything and exits 0', async () => {
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  proc.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(out).toContain('stopped');
}, 60_000);
