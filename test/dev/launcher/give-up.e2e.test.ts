// `npm start` that gives up: with SUPERVISE_MAX_RESTARTS=0 (restarts off, for
// an outer supervisor), the first process that dies stops everything, and the
// launcher exits 1 saying why, leaving no process of its own behind.
import { spawn, spawnSync, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../../../src/dev/launcher/processes';
import { launcherWait } from './launcher-wait';
import { TS_LOADER_ARGS } from '../../../src/common/ts-loader';

let proc: ChildProcess;
let out = '';
let dataDir: string;

/** Waits for `what` in npm start's output; an exit of npm start ends the wait at once. The error ends with the output's tail. */
const waitFor = launcherWait(
  () => proc,
  () => out,
);

afterAll(() => {
  if (proc?.exitCode === null) proc.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('restarts exhausted: npm start stops everything and exits 1', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'give-up-'));
  const [port, temporalPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    WORKER_METRICS_PORT: '0',
    DEMO_MCP: 'false',
    DEMO_WEB: 'false',
    ENGINE: 'embedded',
    NO_COLOR: '1',
    SUPERVISE_MAX_RESTARTS: '0',
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
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  await waitFor('the ready banner', () => out.includes('Agent Execution Service ready'), 90_000);
  const children = spawnSync('ps', ['--ppid', String(proc.pid), '-o', 'pid=,args='], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.trim() && !l.includes('esbuild')); // tsx's own compiler service leaves when its parent does
  const worker = children.find((l) => l.includes('src/worker/main.ts'));
  expect(worker).toBeDefined();
  process.kill(Number(worker!.trim().split(/\s+/)[0]), 'SIGKILL');
  expect(await exited).toBe(1);
  expect(out).toMatch(/npm start: worker was killed by SIGKILL; restarts are off; stopping everything/);
  // Nothing it started is left running.
  for (const line of children) {
    const pid = Number(line.trim().split(/\s+/)[0]);
    expect({ line, alive: isAlive(pid) }).toEqual({ line, alive: false });
  }
}, 120_000);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
