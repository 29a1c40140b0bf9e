// The local sandbox (bubblewrap) against what it promises (docs/computer.md, "Sandbox" and "Threat
// model"): each test tries to break one promise, then checks that the next command still works.
// Host files outside /usr and a minimal /etc are not there (a canary in a "data folder", in /root,
// in another workspace, the repository), nothing outside /workspace and /tmp is writable, sysctls
// neither; the worker's environment does not reach the command; it is uid 1000 without
// capabilities, in its own pid namespace, and dies with the worker; it has no network, and when
// asked for, only the outbound policy's (an allowlisted host; never the worker's loopback); a fork
// bomb, a 4 GB allocation, a busy loop, an output flood and an oversized file each end with the
// limit named; cancel and timeout kill the whole tree, setsid'd processes included.
import { ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { createLocalSandbox, Sandbox, SandboxCommand, SandboxResult } from '../../../activities/computer/sandbox';
import { OutboundPolicy } from '../../../src/common/outbound/policy';
import type { ProxyDecision } from '../../../src/common/outbound/proxy';
import { waitUntil } from '../../support/wait-until';

const REPO = path.resolve(__dirname, '../../..');
const MiB = 1024 * 1024;
const LIMITS = {
  memoryBytes: 256 * MiB,
  processes: 64,
  cpuSeconds: 60,
  maxOutputBytes: 4 * MiB,
  fileSizeBytes: 8 * MiB,
};

let base: string;
let workspace: string;
let sandbox: Sandbox;
const secret = crypto.randomBytes(12).toString('hex');
const rootCanary = path.join('/root', `.sandbox-canary-${process.pid}-${crypto.randomInt(1e9)}`);

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-e2e-'));
  workspace = path.join(base, 'session-a', 'files');
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(path.join(base, 'data'));
  fs.writeFileSync(path.join(base, 'data', 'canary'), secret);
  fs.mkdirSync(path.join(base, 'session-b', 'files'), { recursive: true });
  fs.writeFileSync(path.join(base, 'session-b', 'files', 'canary'), secret);
  fs.writeFileSync(rootCanary, secret);
  sandbox = createLocalSandbox({ tmpBytes: 16 * MiB });
  await sandbox.probe();
});
afterAll(async () => {
  await sandbox.close();
  fs.rmSync(base, { recursive: true, force: true });
  fs.rmSync(rootCanary, { force: true });
});

const run = (script: string, extra: Partial<SandboxCommand> = {}): Promise<SandboxResult> =>
  sandbox.run({
    argv: ['bash', '-c', script],
    workspace,
    timeoutMs: 30_000,
    limits: LIMITS,
    keepBytes: 64 * 1024,
    ...extra,
  });

/** The next command after an attempt to break the sandbox: it runs, in the same workspace. */
async function stillWorks(): Promise<void> {
  const r = await run('echo ok; cat /workspace/still 2>/dev/null; echo there > /workspace/still');
  expect(r).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^ok\n/) });
  expect(r.killed).toBeUndefined();
}

/** A number for sleep's command line, and the shell text that writes it without holding it (so that only the sleeps match). */
function sleepMarker(): { marker: string; text: string } {
  const n = crypto.randomInt(100000, 999999);
  return { marker: `1000.${n}`, text: `1000.$((${n}))` };
}

/** Host processes whose command line contains `marker`. */
function hostProcesses(marker: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) out.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('files', () => {
  test('host files outside /usr and the minimal /etc are not there; a canary anywhere stays unread', async () => {
    const paths = [
      path.join(base, 'data', 'canary'),
      path.join(base, 'session-b', 'files', 'canary'),
      rootCanary,
      path.join(REPO, 'package.json'),
      '/etc/shadow',
      '/etc/ssl/private',
    ];
    const r = await run(paths.map((p) => `cat ${p} 2>&1; ls ${p} 2>&1`).join('; ') + '; ls /; ls /etc /root 2>&1');
    expect(`${r.stdout}${r.stderr}`).not.toContain(secret);
    for (const p of paths) expect(r.stdout).toContain(`${p}: No such file or directory`);
    expect(r.stdout).toContain("ls: cannot access '/root': No such file or directory");
    expect(r.stdout.split('\n')).not.toContain('shadow');
    await stillWorks();
  });

  test('/usr, /etc, / and the sysctls are read-only; /tmp is private and small; /workspace is the host folder', async () => {
    const r = await run(
      [
        'touch /usr/x; echo usr=$?',
        'echo x >> /etc/passwd; echo etc=$?',
        'touch /x; echo root=$?',
        // Writes back the value it reads: harmless on the host were the cover missing.
        'v=$(cat /proc/sys/kernel/printk_ratelimit); echo $v > /proc/sys/kernel/printk_ratelimit; echo sysctl=$?',
        'head -c 32M /dev/zero > /tmp/big; echo tmpfull=$?',
        'echo mine > /tmp/note; echo hi > /workspace/from-sandbox; echo ws=$?',
      ].join('; '),
      { limits: { ...LIMITS, fileSizeBytes: 64 * MiB } },
    );
    expect(r.stdout).toMatch(/usr=1\netc=1\nroot=1\nsysctl=1\ntmpfull=1\nws=0\n/);
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(r.stderr).toMatch(/No space left on device/);
    expect(fs.readFileSync(path.join(workspace, 'from-sandbox'), 'utf8')).toBe('hi\n');
    expect(fs.existsSync('/tmp/note')).toBe(false);
    const next = await run('cat /tmp/note 2>&1; df -B1 /tmp | tail -1');
    expect(next.stdout).toMatch(/No such file or directory/);
    expect(next.stdout).toMatch(/\s16777216\s/);
    await stillWorks();
  });

  test('stdout and stderr are pipes (/dev/stdout opens), and no descriptor of the worker reaches the command', async () => {
    const r = await run(
      "echo out > /dev/stdout; python3 -c \"open('/dev/stderr', 'w').write('err')\"; ls /proc/self/fd",
    );
    expect(r.stdout.split('\n').slice(0, 1)).toEqual(['out']);
    expect(r.stderr).toBe('err');
    // 0-2, and ls's own listing of the folder.
    expect(r.stdout.split('\n').slice(1).filter(Boolean).map(Number)).toEqual([0, 1, 2, 3]);
  });
});

test("the worker's environment does not reach the command; only the base variables and the command's own", async () => {
  const saved = { ...process.env };
  Object.assign(process.env, {
    OPENAI_API_KEY: `sk-${secret}`,
    API_KEYS: `key-${secret}`,
    PAYLOAD_KEYS: `k1:${secret}`,
    REDIS_URL: `redis://:${secret}@127.0.0.1:6379`,
  });
  try {
    const r = await run('env; cat /proc/1/environ /proc/self/environ | tr "\\0" "\\n"', { env: { EXTRA: 'yes' } });
    expect(`${r.stdout}${r.stderr}`).not.toContain(secret);
    const names = new Set(
      r.stdout
        .split('\n')
        .map((l) => l.split('=')[0])
        .filter(Boolean),
    );
    expect([...names].sort()).toEqual(['EXTRA', 'HOME', 'LANG', 'PATH', 'PWD', 'SHLVL', 'TERM', '_']);
    expect(r.stdout).toContain('HOME=/workspace\n');
    expect(r.stdout).toContain('LANG=C.UTF-8\n');
    expect(r.stdout).toContain('TERM=dumb\n');
  } finally {
    process.env = saved;
  }
  await stillWorks();
});

describe('privileges', () => {
  test('uid and gid 1000, no capability, no new privileges, no user namespace of its own', async () => {
    const r = await run(
      'id -u; id -g; grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status; unshare -U true; echo userns=$?',
    );
    expect(r.stdout).toBe(
      '1000\n1000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\nuserns=1\n',
    );
  });

  test("its own pid namespace: the host's processes, the worker's among them, are not listed", async () => {
    const r = await run('for p in /proc/[0-9]*; do echo "${p#/proc/} $(tr "\\0" " " < $p/cmdline)"; done');
    const listed = r.stdout.split('\n').filter(Boolean);
    const pids = listed.map((l) => Number(l.split(' ')[0]));
    expect(pids).not.toContain(process.pid);
    expect(listed.some((l) => /node|jest/.test(l))).toBe(false);
    expect(Math.max(...pids)).toBeLessThan(100);
  });

  test('the command dies with the worker that started it (--die-with-parent)', async () => {
    const { marker, text } = sleepMarker();
    const script = path.join(base, 'worker.ts');
    fs.writeFileSync(
      script,
      `const { createLocalSandbox } = require(${JSON.stringify(path.join(REPO, 'activities/computer/sandbox'))});
createLocalSandbox({ runtimeParent: ${JSON.stringify(base)} }).run({ argv: ['bash', '-c', 'sleep ${text} & setsid sleep ${text} >/dev/null 2>&1 & sleep ${text}'],
  workspace: ${JSON.stringify(workspace)}, timeoutMs: 600000, keepBytes: 100, limits: ${JSON.stringify(LIMITS)} });`,
    );
    const worker: ChildProcess = spawn(process.execPath, ['-r', path.join(REPO, 'bin/register-ts.js'), script], {
      stdio: 'inherit',
    });
    try {
      await waitUntil(
        'the worker to start three sleeps in its sandbox',
        () => hostProcesses(marker),
        (p) => p.length === 3,
      );
    } finally {
      worker.kill('SIGKILL');
    }
    await waitUntil(
      'every process of the sandbox to die with the worker',
      () => hostProcesses(marker),
      (p) => !p.length,
    );
    await stillWorks();
  });
});

describe('network', () => {
  let server: net.Server;
  let connections = 0;
  beforeAll(async () => {
    server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise((r) => server.close(r)));

  test('no connection leaves: not to the worker on 127.0.0.1, not to any address; only lo is there', async () => {
    const { port } = server.address() as net.AddressInfo;
    const py = [
      'import socket',
      `for host, port in [("127.0.0.1", ${port}), ("1.1.1.1", 53), ("10.0.0.1", 80)]:`,
      '    try:',
      '        socket.create_connection((host, port), timeout=5); print(host, "connected")',
      '    except OSError as e:',
      '        print(host, "refused", e.errno)',
      'print([n for _, n in socket.if_nameindex()])',
    ].join('\n');
    const r = await run(`python3 -c '${py}'`);
    expect(r.stdout).not.toContain('connected');
    expect(r.stdout).toMatch(/127\.0\.0\.1 refused \d+\n1\.1\.1\.1 refused \d+\n10\.0\.0\.1 refused \d+\n\['lo'\]\n/);
    expect(connections).toBe(0);
    await stillWorks();
  });
});

describe('network through the outbound policy (SandboxCommand.network)', () => {
  // The "registry": an allowlisted host on 127.0.0.2. The worker's own port on 127.0.0.1 stands for
  // Redis, the engine and the gateway: loopback, never allowlisted here.
  let registry: http.Server;
  let own: http.Server;
  let ownConnections = 0;
  let networked: Sandbox;
  const decisions: ProxyDecision[] = [];
  beforeAll(async () => {
    registry = http.createServer((req, res) => res.end(`registry:${req.method} ${req.url}\n`));
    own = http.createServer((_req, res) => res.end('the worker answered\n'));
    own.on('connection', () => ownConnections++);
    await new Promise<void>((r) => registry.listen(0, '127.0.0.2', r));
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
    networked = createLocalSandbox({
      tmpBytes: 16 * MiB,
      network: { policy: new OutboundPolicy('127.0.0.2/32'), onDecision: (d) => decisions.push(d) },
    });
  });
  afterAll(async () => {
    await networked.close();
    await new Promise((r) => registry.close(r));
    await new Promise((r) => own.close(r));
  });
  const runWith = (script: string, network = true) =>
    networked.run({
      argv: ['bash', '-c', script],
      workspace,
      timeoutMs: 30_000,
      limits: LIMITS,
      keepBytes: 64 * 1024,
      network,
    });

  test('an allowlisted host is reached by plain HTTP, a CONNECT tunnel and python; nothing else of the network', async () => {
    const at = `127.0.0.2:${(registry.address() as net.AddressInfo).port}`;
    const r = await runWith(
      [
        `curl -sS http://${at}/plain`,
        `curl -sS -p http://${at}/tunnel`,
        `python3 -c 'import urllib.request; print(urllib.request.urlopen("http://${at}/py").read().decode().strip())'`,
        // Around the proxy: the sandbox's 127.0.0.2 is its own loopback, where nothing listens.
        `python3 -c 'import socket; socket.create_connection(("127.0.0.2", ${at.split(':')[1]}), timeout=5)' 2>/dev/null || echo "direct refused"`,
        `python3 -c 'import socket; print([n for _, n in socket.if_nameindex()])'`,
      ].join('; '),
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`registry:GET /plain\nregistry:GET /tunnel\nregistry:GET /py\ndirect refused\n['lo']\n`);
    expect(decisions.map((d) => `${d.kind} ${d.result}`)).toEqual(['http allowed', 'connect allowed', 'http allowed']);
  });

  test("the worker's loopback, private and link-local addresses are refused by the policy, saying why", async () => {
    decisions.length = 0;
    const ownPort = (own.address() as net.AddressInfo).port;
    const r = await runWith(
      [
        // --noproxy '': through the proxy although NO_PROXY names 127.0.0.1 (the sandbox's own loopback).
        `curl -sS --noproxy '' http://127.0.0.1:${ownPort}/`,
        `curl -sS --noproxy '' -p http://127.0.0.1:${ownPort}/ 2>&1 | head -1`,
        'curl -sS http://10.0.0.1/',
        'curl -sS http://169.254.169.254/latest/meta-data/',
      ].join('; '),
    );
    expect(r.stdout).toMatch(/http:\/\/127\.0\.0\.1:\d+\/ resolves to 127\.0\.0\.1, a loopback address/);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    expect(r.stdout).toMatch(/http:\/\/10\.0\.0\.1\/ resolves to 10\.0\.0\.1, a private address/);
    expect(r.stdout).toMatch(
      /169\.254\.169\.254\/latest\/meta-data\/ resolves to 169\.254\.169\.254, a link-local address/,
    );
    expect(ownConnections).toBe(0);
    expect(decisions.map((d) => d.result)).toEqual(['refused', 'refused', 'refused', 'refused']);
    await stillWorks();
  });

  test('a command that does not ask gets no proxy, no socket, no network, in the same sandbox', async () => {
    const r = await runWith(
      `env | grep -ci proxy; ls /run/agent-network 2>&1; curl -sS http://127.0.0.2:${(registry.address() as net.AddressInfo).port}/ 2>&1`,
      false,
    );
    expect(r.stdout).toMatch(/^0\n.*No such file or directory\ncurl: \(7\) Failed to connect/);
  });

  test('a sandbox made without a policy refuses a command that asks for network', async () => {
    await expect(run('true', { network: true })).rejects.toThrow(/no outbound policy/);
    await stillWorks();
  });
});

describe('limits', () => {
  beforeAll(async () => {
    // These promises rest on control groups; a host without writable ones fails here, saying so.
    expect((await sandbox.probe()).memory).toMatch(/^cgroup/);
  });

  test('a fork bomb ends at the process limit, named', async () => {
    const r = await run(':(){ :|:& };: ; sleep 30', { limits: { ...LIMITS, processes: 64 } });
    expect(r).toMatchObject({ killed: 'processes', exitCode: null });
    await stillWorks();
  });

  test('4 GB of memory: killed, named', async () => {
    const r = await run('python3 -c "b = bytearray(4 * 1024**3); print(len(b))"');
    expect(r.killed).toBe('memory');
    expect(r.stdout).toBe('');
    await stillWorks();
  });

  test('CPU time counts every process of the command, and ends it, named', async () => {
    const r = await run('for i in 1 2 3; do (while :; do :; done) & done; wait', {
      limits: { ...LIMITS, cpuSeconds: 2 },
    });
    expect(r.killed).toBe('cpu');
    await stillWorks();
  });

  test('a busy loop ends at its timeout, named', async () => {
    const r = await run('while :; do :; done', { timeoutMs: 1500 });
    expect(r).toMatchObject({ killed: 'timeout', exitCode: null, signal: 'SIGKILL' });
    await stillWorks();
  });

  test('an output flood ends at the output limit; what is kept is capped', async () => {
    const file = path.join(base, 'flood.out');
    const limits = { ...LIMITS, maxOutputBytes: MiB };
    const r = await run('yes', { limits, keepBytes: 1000, outputFiles: { stdout: file } });
    expect(r.killed).toBe('output');
    expect(r.stdoutBytes).toBeGreaterThan(MiB);
    expect(Buffer.byteLength(r.stdout)).toBe(1000);
    expect(fs.statSync(file).size).toBe(MiB);
    await stillWorks();
  });

  test('a file may not grow past the file size limit (RLIMIT_FSIZE), however it is written', async () => {
    const r = await run(
      'head -c 3M /dev/zero > big; echo head=$?; fallocate -l 10M big2; echo fallocate=$?; truncate -s 10M big3; echo truncate=$?; ls -l big | cut -d" " -f5',
      { limits: { ...LIMITS, fileSizeBytes: MiB } },
    );
    expect(r.stdout).toMatch(/^head=153\nfallocate=153\ntruncate=153\n1048576\n$/);
    expect(fs.statSync(path.join(workspace, 'big')).size).toBe(MiB);
    await stillWorks();
  });
});

describe('cancel and timeout kill the whole tree', () => {
  const tree = (t: string) => `sleep ${t} & setsid sleep ${t} >/dev/null 2>&1 & (sleep ${t} &) ; sleep ${t}`;

  test.each(['cancel', 'timeout'] as const)('%s', async (how) => {
    const { marker, text } = sleepMarker();
    const abort = new AbortController();
    const running = run(tree(text), how === 'cancel' ? { signal: abort.signal } : { timeoutMs: 5000 });
    await waitUntil(
      'the tree of four sleeps to start',
      () => hostProcesses(marker),
      (p) => p.length === 4,
    );
    abort.abort();
    expect((await running).killed).toBe(how);
    await waitUntil(
      'no process of the tree to remain on the host',
      () => hostProcesses(marker),
      (p) => !p.length,
    );
    await stillWorks();
  });
});

describe('without control groups (rlimits only)', () => {
  const plain = createLocalSandbox({ cgroups: 'off' });
  afterAll(() => plain.close());
  const runPlain = (script: string, limits = LIMITS) =>
    plain.run({ argv: ['bash', '-c', script], workspace, timeoutMs: 30_000, limits, keepBytes: 4096 });

  test('says how it enforces each limit, and holds memory by address space and CPU time per process', async () => {
    const enforcement = await plain.probe();
    expect(enforcement.memory).toMatch(/^RLIMIT_AS/);
    expect(enforcement.cpu).toMatch(/^RLIMIT_CPU/);
    const mem = await runPlain('python3 -c "b = bytearray(1024**3)"');
    expect(mem.stderr).toContain('MemoryError');
    const cpu = await runPlain('while :; do :; done', { ...LIMITS, cpuSeconds: 1 });
    expect(cpu.killed).toBe('cpu');
  });
});
