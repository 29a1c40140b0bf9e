// The sandbox's spawner (activities/computer/sandbox/spawner.ts): the small process that starts
// each command for the worker. What it must not do is outlive either side or leave a command
// running: killed mid-command, it takes the command with it, the call fails as a sandbox error,
// and the next command starts a new spawner; the worker killed, it ends with the worker's
// commands. (sandbox.e2e.test.ts checks the commands themselves die with the worker.)
import { ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalSandbox, Sandbox, SandboxStartError } from '../../../activities/computer/sandbox';
import { waitUntil } from '../../support/wait-until';

const REPO = path.resolve(__dirname, '../../..');
const MiB = 1024 * 1024;
const LIMITS = { memoryBytes: 256 * MiB, processes: 64, cpuSeconds: 60, maxOutputBytes: MiB, fileSizeBytes: MiB };

let base: string;
let workspace: string;
let sandbox: Sandbox;

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'spawner-e2e-'));
  workspace = path.join(base, 'files');
  fs.mkdirSync(workspace);
  sandbox = createLocalSandbox({ runtimeParent: base });
  await sandbox.probe();
});
afterAll(async () => {
  await sandbox.close();
  fs.rmSync(base, { recursive: true, force: true });
});

/** Host processes whose command line contains `text`, with their parent's pid. */
function processes(text: string): { pid: number; ppid: number }[] {
  const out: { pid: number; ppid: number }[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      out.push({ pid: Number(pid), ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The spawners whose parent is `parent`. */
const spawnersOf = (parent: number) => processes('spawner-process.js').filter((p) => p.ppid === parent);

/** A number for sleep's command line that only the sleep's own command line holds. */
function sleepMarker(): { marker: string; text: string } {
  const n = crypto.randomInt(100000, 999999);
  return { marker: `1000.${n}`, text: `1000.$((${n}))` };
}

const run = (script: string) =>
  sandbox.run({ argv: ['bash', '-c', script], workspace, timeoutMs: 60_000, keepBytes: 4096, limits: LIMITS });

test('one spawner serves every command, and its memory is a small part of the worker’s', async () => {
  await run('true');
  await run('true');
  const [spawner, ...more] = spawnersOf(process.pid);
  expect(spawner).toBeDefined();
  expect(more).toEqual([]);
  const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  expect(rssKiB(spawner.pid)).toBeLessThan(rssKiB(process.pid));
});

test('a spawner killed mid-command takes the command with it; the call fails as a sandbox error; the next command starts a new spawner', async () => {
  const { marker, text } = sleepMarker();
  const running = run(`sleep ${text}`);
  await waitUntil(
    'the sleep to run',
    () => processes(marker),
    (p) => p.length === 1,
  );
  const [spawner] = spawnersOf(process.pid);
  process.kill(spawner.pid, 'SIGKILL');
  await expect(running).rejects.toThrow(SandboxStartError);
  await waitUntil(
    'the sleep to end with its spawner',
    () => processes(marker),
    (p) => !p.length,
  );
  const next = await run('echo again');
  expect(next).toMatchObject({ exitCode: 0, stdout: 'again\n' });
  expect(spawnersOf(process.pid).map((p) => p.pid)).not.toContain(spawner.pid);
});

test('the worker killed, its spawner ends, and the command with it', async () => {
  const { marker, text } = sleepMarker();
  const script = path.join(base, 'worker.ts');
  fs.writeFileSync(
    script,
    `const { createLocalSandbox } = require(${JSON.stringify(path.join(REPO, 'activities/computer/sandbox'))});
createLocalSandbox({ runtimeParent: ${JSON.stringify(base)} }).run({ argv: ['bash', '-c', 'sleep ${text}'],
  workspace: ${JSON.stringify(workspace)}, timeoutMs: 600000, keepBytes: 100, limits: ${JSON.stringify(LIMITS)} });`,
  );
  const worker: ChildProcess = spawn(process.execPath, ['-r', path.join(REPO, 'bin/register-ts.js'), script], {
    stdio: 'inherit',
  });
  let spawner: number | undefined;
  try {
    await waitUntil(
      'the worker to start a sleep',
      () => processes(marker),
      (p) => p.length === 1,
    );
    spawner = spawnersOf(worker.pid!)[0]?.pid;
  } finally {
    worker.kill('SIGKILL');
  }
  expect(spawner).toBeDefined();
  await waitUntil(
    'the spawner and the sleep to end with the worker',
    () => [...processes(marker), ...processes('spawner-process.js').filter((p) => p.pid === spawner)],
    (p) => !p.length,
  );
});
