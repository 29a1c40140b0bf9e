// The bash tool (activities/computer/bash.ts) through the real local sandbox: the working
// directory and exported variables carry over from call to call and to a new worker, per session
// and out of the agent's reach; long output is cut for the model, whole in the workspace; the
// timeout, clamped to its maximum; the sandbox's kills in words; the workspace's quota held while
// the command runs (dd, fallocate, many files), and the next command working after an rm.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BashLimits,
  bashLimits,
  OUTPUTS_FOLDER,
  runBash,
  RunBashInput,
  SHELL_STATE_FILE,
} from '../../../activities/computer/bash';
import { createLocalSandbox } from '../../../activities/computer/sandbox';
import { sessionWorkspace, SessionWorkspace } from '../../../src/common/workspaces/layout';

const MiB = 1024 * 1024;
const LIMITS: BashLimits = bashLimits({
  WORKSPACE_MAX_BYTES: 4 * MiB,
  WORKSPACE_MAX_FILES: 50,
  BASH_TIMEOUT_DEFAULT_S: 30,
  BASH_TIMEOUT_MAX_S: 60,
  SANDBOX_MEMORY_MB: 256,
  SANDBOX_MAX_PROCESSES: 64,
  SANDBOX_CPU_SECONDS: 60,
  SANDBOX_MAX_OUTPUT_BYTES: 8 * MiB,
  BASH_OUTPUT_MODEL_BYTES: 1024,
});

const sandbox = createLocalSandbox();
let dir: string;
let ws: SessionWorkspace;
let calls = 0;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bash-e2e-'));
  ws = sessionWorkspace(dir, 'acct', 'sess');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
afterAll(() => sandbox.close());

const bash = (command: string, extra: Partial<RunBashInput> = {}) =>
  runBash({ sandbox, workspace: ws, command, limits: LIMITS, callId: `call_${++calls}`, ...extra });

describe('state carries over, as in a terminal', () => {
  test('the working directory and exported variables, to the next call and to a new worker', async () => {
    const first = await bash(
      'mkdir -p src/app && cd src/app && export GREETING="hello world" ODD=$\'a\\nb "c"\' && NOT_EXPORTED=1 && export GONE=1 && unset GONE',
    );
    expect(first).toMatchObject({ exitCode: 0, cwd: '/workspace/src/app', isError: false });
    const second = await bash('pwd; echo "$GREETING|$ODD|${NOT_EXPORTED-unset}|${GONE-unset}"');
    expect(second.stdout.text).toBe('/workspace/src/app\nhello world|a\nb "c"|unset|unset\n');
    // Another worker (a new sandbox) on the same session: the state is the session's, on disk.
    const another = createLocalSandbox();
    const third = await runBash({
      sandbox: another,
      workspace: ws,
      command: 'pwd; echo $GREETING',
      limits: LIMITS,
      callId: 'other',
    });
    expect(third.stdout.text).toBe('/workspace/src/app\nhello world\n');
    await another.close();
  });

  test('`exit` saves the state too; a folder gone since starts in /workspace, saying so', async () => {
    await bash('mkdir -p gone && cd gone && export A=1 && exit 3');
    const next = await bash('rmdir /workspace/gone; echo $A');
    expect(next.stdout.text).toBe('1\n');
    const after = await bash('pwd');
    expect(after.stdout.text).toBe('/workspace\n');
    expect(after.stderr.text).toContain('the working directory /workspace/gone is gone');
  });

  test("each session has its own, in the workspace's state folder, which the sandbox cannot see", async () => {
    await bash('export SECRET_OF_A=a-value; cd /tmp');
    const other = sessionWorkspace(dir, 'acct', 'other-session');
    const b = await bash(
      'echo "[$SECRET_OF_A]"; pwd; grep -rls a-value /workspace /tmp /etc /dev/shm; ls -aR /workspace',
      {
        workspace: other,
      },
    );
    // What /workspace holds while the command runs: only this call's output files.
    expect(b.stdout.text).toMatch(
      /^\[\]\n\/workspace\n\/workspace:\n\.\n\.\.\n\.outputs\n\n\/workspace\/\.outputs:\n\.\n\.\.\ncall_\d+\.stderr\ncall_\d+\.stdout\n$/,
    );
    expect(fs.readFileSync(path.join(ws.state, SHELL_STATE_FILE), 'utf8')).toContain('SECRET_OF_A=a-value');
    expect(fs.readdirSync(ws.files)).toEqual([]);
  });

  test('a killed command leaves the state of before', async () => {
    await bash('export KEPT=1');
    const killed = await bash('export KEPT=2; cd /tmp; sleep 30', { timeoutS: 1 });
    expect(killed.killed).toBe('timeout');
    expect((await bash('echo $KEPT; pwd')).stdout.text).toBe('1\n/workspace\n');
  });
});

describe('output', () => {
  test("a long stream reaches the model cut (head and tail), whole in the workspace's .outputs", async () => {
    const r = await bash('seq 1 100000; echo small >&2');
    const whole = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('');
    expect(r.stdout.bytes).toBe(Buffer.byteLength(whole));
    expect(r.stdout.file).toBe(`/workspace/${OUTPUTS_FOLDER}/call_${calls}.stdout`);
    expect(fs.readFileSync(path.join(ws.files, OUTPUTS_FOLDER, `call_${calls}.stdout`), 'utf8')).toBe(whole);
    expect(r.stdout.text).toMatch(
      /^1\n2\n3\n[\s\S]*\n\[… \d+ bytes cut here; all 588895 bytes are in \/workspace\/\.outputs\/call_\d+\.stdout …\]\n[\s\S]*\n99999\n100000\n$/,
    );
    expect(Buffer.byteLength(r.stdout.text)).toBeLessThan(1024 + 200);
    expect(r.stdout.cutBytes).toBe(r.stdout.bytes - Buffer.byteLength(r.stdout.text.replace(/\[…[^\]]*\]\n/, '')));
    // stderr fit: told whole, no file kept.
    expect(r.stderr).toEqual({ text: 'small\n', bytes: 6, cutBytes: 0 });
    expect(fs.existsSync(path.join(ws.files, OUTPUTS_FOLDER, `call_${calls}.stderr`))).toBe(false);
    expect(r.text).toContain('exit code: 0\n');
  });

  test('a link in place of .outputs does not make the worker write outside the workspace', async () => {
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    fs.mkdirSync(ws.files, { recursive: true });
    fs.symlinkSync(outside, path.join(ws.files, OUTPUTS_FOLDER));
    const r = await bash('seq 1 10000');
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(r.stdout.file).toBeUndefined();
    expect(r.stdout.text).toMatch(/more bytes not shown; the whole stdout could not be kept/);
  });
});

describe('time', () => {
  test('the timeout kills the command and says so; a bigger ask than the maximum is clamped, saying so', async () => {
    const r = await bash('echo started; sleep 30', { timeoutS: 1000, limits: { ...LIMITS, timeoutMaxS: 1 } });
    expect(r).toMatchObject({ killed: 'timeout', exitCode: null, timeoutS: 1, isError: true });
    expect(r.stdout.text).toBe('started\n');
    expect(r.text).toContain('note: the timeout was limited to 1 s (1000 s asked; the most allowed)');
    expect(r.text).toContain('killed: it ran longer than its timeout of 1 s');
    expect((await bash('echo fine')).text).toContain('exit code: 0');
  });

  test('cancel kills it', async () => {
    const abort = new AbortController();
    const running = bash('sleep 30', { signal: abort.signal });
    setTimeout(() => abort.abort(), 200); // a moment into the command, whatever it is doing
    const r = await running;
    expect(r).toMatchObject({ killed: 'cancel', isError: true });
    expect(r.text).toContain('killed: the run was cancelled');
  });

  test('a kill by the sandbox is said in words: memory', async () => {
    const r = await bash('python3 -c "b = bytearray(2 * 1024**3)"');
    expect(r.killed).toBe('memory');
    expect(r.text).toContain('killed: it used more than 256 MiB of memory');
  });
});

describe("the workspace's quota", () => {
  test('a file may not outgrow what remains: dd and fallocate fail, the workspace stays within', async () => {
    const r = await bash(
      'dd if=/dev/zero of=big bs=1M count=10 status=none; echo dd=$?; fallocate -l 1G huge; echo fallocate=$?',
    );
    expect(r.stdout.text).toBe('dd=1\nfallocate=1\n');
    expect(r.stderr.text).toContain('File too large');
    expect(fs.statSync(path.join(ws.files, 'big')).size).toBe(4 * MiB);
  });

  test('over the quota by many files: killed, said; the next command may only shrink it; after rm all is well', async () => {
    const r = await bash('for i in $(seq 1 80); do echo x > f$i; done; sleep 30');
    expect(r).toMatchObject({ killed: 'disk', isError: true });
    expect(r.text).toContain(
      'killed: the workspace is over its quota of 4194304 bytes or 50 files: delete files (rm) to make room',
    );
    const adding = await bash('echo more > g; sleep 30');
    expect(adding.killed).toBe('disk');
    expect(adding.text).toMatch(/^note: the workspace is over its quota/);
    const cleaning = await bash('rm -f f* g; ls | wc -l');
    expect(cleaning).toMatchObject({ exitCode: 0, isError: false });
    expect(cleaning.stdout.text).toBe('0\n');
    const next = await bash('echo back > f; cat f');
    expect(next.text).not.toContain('note:');
    expect(next.stdout.text).toBe('back\n');
  });

  test('the size its caller measured just before is the one the quota starts from (the workspace is not walked again)', async () => {
    const measured = await bash('echo small', { usageBefore: { bytes: 5 * 1024 * 1024, files: 1 } });
    expect(measured.text).toMatch(/^note: the workspace is over its quota/);
    expect((await bash('echo small')).text).not.toMatch(/over its quota/);
  });

  test('over the quota by bytes across files: killed', async () => {
    const r = await bash('for i in 1 2 3 4 5 6; do head -c 1M /dev/zero > part$i; done; sleep 30');
    expect(r.killed).toBe('disk');
    expect((await bash('rm part*; echo ok')).stdout.text).toBe('ok\n');
  });
});
