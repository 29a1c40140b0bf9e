// The sandbox's pure parts (the e2e file runs the real thing): bwrap's command line, the host's
// layout read from a stand-in root, the control groups' files on stand-in folders (v1 and v2, the
// kernel's part not being there: what is written where, what is read back), the mount and cgroup
// tables parsed, the rlimits, the output's utf8 cuts and budget.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { BASE_ENV, bwrapArgs } from '../../../activities/computer/sandbox/bwrap-args';
import { parseMountinfo, parseProcCgroup } from '../../../activities/computer/sandbox/cgroup-detect';
import {
  cgroupV1,
  cgroupV2,
  keyedCount,
  prepareV2Parent,
  sweepStale,
} from '../../../activities/computer/sandbox/cgroups';
import { verdict } from '../../../activities/computer/sandbox/command-run';
import { readHostLayout } from '../../../activities/computer/sandbox/host-layout';
import { OutputBudget, StreamCollector, utf8Head, utf8Tail } from '../../../activities/computer/sandbox/output';
import { rlimits } from '../../../activities/computer/sandbox/spawn-script';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-unit-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const put = (rel: string, text = '') => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};

describe('bwrap command line', () => {
  const layout = {
    entries: [
      { path: '/usr', bind: '/usr' },
      { path: '/bin', symlink: 'usr/bin' },
      { path: '/etc/ld.so.cache', bind: '/etc/ld.so.cache' },
    ],
    procCovers: ['/proc/sys'],
  };
  const opts = { uid: 1000, gid: 1000, tmpBytes: 1024, etcDir: '/run/etc', etcFiles: ['passwd'], statusFd: 5 };
  const args = bwrapArgs(layout, opts, { argv: ['bash', '-c', 'x'], workspace: '/data/ws/files', env: { EXTRA: '1' } });
  const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 3).join(' ')] : []));

  test('every namespace, no capability, no nested user namespace, dies with its parent, own session', () => {
    for (const flag of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session'])
      expect(args).toContain(flag);
    expect(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2)).toEqual(['--cap-drop', 'ALL']);
    expect(args.slice(args.indexOf('--uid'), args.indexOf('--uid') + 4)).toEqual(['--uid', '1000', '--gid', '1000']);
  });

  test('a clear environment: the base variables and the extra ones only', () => {
    expect(args.indexOf('--clearenv')).toBeLessThan(args.indexOf('--setenv'));
    expect(pairs('--setenv')).toEqual([...Object.entries(BASE_ENV).map(([k, v]) => `${k} ${v}`), 'EXTRA 1']);
    expect(() => bwrapArgs(layout, opts, { argv: ['true'], workspace: '/w', env: { 'A=B': 'x' } })).toThrow(
      /not a variable name/,
    );
  });

  test('read-only host paths, /proc covered, the workspace the only writable bind, the root read-only last', () => {
    expect(pairs('--ro-bind')).toEqual([
      '/usr /usr',
      '/etc/ld.so.cache /etc/ld.so.cache',
      '/run/etc/passwd /etc/passwd',
      '/proc/sys /proc/sys',
    ]);
    expect(args.indexOf('--proc')).toBeLessThan(args.lastIndexOf('/proc/sys'));
    expect(pairs('--bind')).toEqual(['/data/ws/files /workspace']);
    expect(pairs('--symlink')).toEqual(['usr/bin /bin']);
    expect(args.slice(args.indexOf('--remount-ro'), args.indexOf('--remount-ro') + 2)).toEqual(['--remount-ro', '/']);
    expect(args.indexOf('--bind')).toBeLessThan(args.indexOf('--remount-ro'));
    expect(args.slice(-4)).toEqual(['--', 'bash', '-c', 'x']);
  });
});

test("the host's layout: /usr, the merged-usr links as they are, /etc's allowlist only, the /proc entries present", () => {
  put('usr/bin/x');
  fs.symlinkSync('usr/bin', path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'lib64'));
  for (const f of [
    'ld.so.cache',
    'shadow',
    'npmrc',
    'python3.11/sitecustomize.py',
    'ssl/certs/ca.pem',
    'ssl/private/key',
  ])
    put(`etc/${f}`);
  fs.symlinkSync('/usr/share/zoneinfo/Etc/UTC', path.join(dir, 'etc/localtime'));
  put('proc/sys/kernel/x');
  const layout = readHostLayout(dir);
  expect(layout.entries).toEqual([
    { path: '/usr', bind: '/usr' },
    { path: '/bin', symlink: 'usr/bin' },
    { path: '/lib64', bind: '/lib64' },
    { path: '/etc/ld.so.cache', bind: '/etc/ld.so.cache' },
    { path: '/etc/ssl/certs', bind: '/etc/ssl/certs' },
    { path: '/etc/localtime', symlink: '/usr/share/zoneinfo/Etc/UTC' },
    { path: '/etc/python3.11', bind: '/etc/python3.11' },
  ]);
  expect(layout.procCovers).toEqual(['/proc/sys']);
});

describe('control groups', () => {
  const v1Parents = () => ({
    memory: path.join(dir, 'memory'),
    pids: path.join(dir, 'pids'),
    cpuacct: path.join(dir, 'cpuacct'),
  });
  /** Empties a stand-in group's folders (a real one's files cannot be removed; an empty one is removable). */
  const emptyFolders = (name: string) => {
    for (const h of ['memory', 'pids', 'cpuacct'])
      for (const f of fs.readdirSync(path.join(dir, h, name))) fs.rmSync(path.join(dir, h, name, f));
  };

  test('v1: a group per hierarchy, its limits written, its counters read from the last reset, removed', async () => {
    const group = cgroupV1(v1Parents()).create('w1-1');
    group.setLimits({ memoryBytes: 1000, processes: 7 });
    expect(fs.readFileSync(path.join(dir, 'memory/w1-1/memory.limit_in_bytes'), 'utf8')).toBe('1000');
    expect(fs.readFileSync(path.join(dir, 'pids/w1-1/pids.max'), 'utf8')).toBe('7');
    expect(group.procsFiles).toEqual(['memory', 'pids', 'cpuacct'].map((h) => path.join(dir, h, 'w1-1/cgroup.procs')));
    expect(group.counters()).toEqual({ oomKills: 0, pidsMaxHits: 0, cpuNs: 0 });
    put('memory/w1-1/memory.oom_control', 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n');
    put('pids/w1-1/pids.events', 'max 5\n');
    put('cpuacct/w1-1/cpuacct.usage', '1500000000\n');
    expect(group.counters()).toEqual({ oomKills: 2, pidsMaxHits: 5, cpuNs: 1.5e9 });
    expect(verdict(group.counters(), 1)).toBe('memory');
    group.reset();
    put('pids/w1-1/pids.events', 'max 6\n');
    expect(group.counters()).toEqual({ oomKills: 0, pidsMaxHits: 1, cpuNs: 0 });
    put('pids/w1-1/cgroup.procs', '2147483646\n'); // no such process, should it ever be killed
    expect(group.populated()).toBe(true);
    emptyFolders('w1-1');
    expect(await group.drain(100)).toBe(true);
    group.remove();
    expect(fs.readdirSync(path.join(dir, 'memory'))).toEqual([]);
  });

  test('v2: the parent passes memory and pids down; a group with memory.max, no swap, pids.max; counters from the events files', () => {
    put('sandboxes/cgroup.controllers', 'cpu memory pids io\n');
    put('sandboxes/cgroup.subtree_control', '');
    prepareV2Parent(path.join(dir, 'sandboxes'));
    expect(fs.readFileSync(path.join(dir, 'sandboxes/cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    const group = cgroupV2(path.join(dir, 'sandboxes')).create('w1-2');
    group.setLimits({ memoryBytes: 2048, processes: 9 });
    const read = (f: string) => fs.readFileSync(path.join(dir, 'sandboxes/w1-2', f), 'utf8');
    expect([read('memory.max'), read('memory.swap.max'), read('pids.max')]).toEqual(['2048', '0', '9']);
    put('sandboxes/w1-2/memory.events', 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    put('sandboxes/w1-2/pids.events', 'max 0\n');
    put('sandboxes/w1-2/cpu.stat', 'usage_usec 2500000\nuser_usec 2000000\n');
    expect(group.counters()).toEqual({ oomKills: 1, pidsMaxHits: 0, cpuNs: 2.5e9 });
    expect(verdict({ oomKills: 0, pidsMaxHits: 0, cpuNs: 2.5e9 }, 2)).toBe('cpu');
    expect(verdict({ oomKills: 0, pidsMaxHits: 1, cpuNs: 0 }, 2)).toBe('processes');
    group.kill();
    expect(read('cgroup.kill')).toBe('1');
  });

  test('v2: a parent without the memory controller is refused, saying so', () => {
    put('p/cgroup.controllers', 'cpu pids\n');
    expect(() => prepareV2Parent(path.join(dir, 'p'))).toThrow(/does not offer the memory controller/);
  });

  test('the sweep removes the empty groups it is told are stale, and no busy one', () => {
    for (const name of ['w100-a-1', 'w200-b-3', 'w300-c-1']) fs.mkdirSync(path.join(dir, name));
    put('w300-c-1/cgroup.procs', '42\n'); // a regular folder with a file stands for a group with a process
    expect(sweepStale([dir], (name) => name !== 'w100-a-1')).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual(['w100-a-1', 'w300-c-1']);
  });

  test('the kernel tables: mountinfo (escaped paths, cgroup roots) and /proc/self/cgroup', () => {
    const mounts = parseMountinfo(
      '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n' +
        '41 31 0:38 /docker/abc /sys/fs/cgroup/with\\040space rw - cgroup2 cgroup2 rw,nsdelegate\n',
    );
    expect(mounts).toEqual([
      { root: '/', mountPoint: '/sys/fs/cgroup/memory', fsType: 'cgroup', superOptions: ['rw', 'memory'] },
      {
        root: '/docker/abc',
        mountPoint: '/sys/fs/cgroup/with space',
        fsType: 'cgroup2',
        superOptions: ['rw', 'nsdelegate'],
      },
    ]);
    const own = parseProcCgroup('4:memory:/process_api/x\n3:cpu,cpuacct:/\n0::/user.slice\n');
    expect([...own.v1.entries()]).toEqual([
      ['memory', '/process_api/x'],
      ['cpu', '/'],
      ['cpuacct', '/'],
    ]);
    expect(own.v2).toBe('/user.slice');
    expect(keyedCount('max 12\n', 'max')).toBe(12);
    expect(keyedCount('', 'oom_kill')).toBe(0);
  });
});

test('rlimits: file size (KiB), no core files, CPU; without a control group also memory, and processes unless root', () => {
  const limits = { memoryBytes: 1024 * 1024, processes: 10, cpuSeconds: 5, maxOutputBytes: 1, fileSizeBytes: 10_000 };
  expect(rlimits(limits, { cgroup: true, root: true })).toEqual({ soft: '-c 0 -f 9 -t 6', hard: '-c 0 -f 9 -t 7' });
  expect(rlimits(limits, { cgroup: false, root: true })).toEqual({
    soft: '-c 0 -f 9 -v 1024 -t 5',
    hard: '-c 0 -f 9 -v 1024 -t 6',
  });
  expect(rlimits(limits, { cgroup: false, root: false }).soft).toBe('-c 0 -f 9 -v 1024 -u 10 -t 5');
});

describe('output', () => {
  test('utf8 cuts never split a character', () => {
    const text = Buffer.from('aé€😀b');
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((n) => utf8Head(text, n))).toEqual([
      'a',
      'a',
      'aé',
      'aé',
      'aé',
      'aé€',
      'aé€',
      'aé€',
      'aé€',
      'aé€😀',
      'aé€😀b',
    ]);
    expect([1, 2, 5, 6].map((n) => utf8Tail(text, n))).toEqual(['b', 'b', '😀b', '😀b']);
  });

  test('the budget: what fits, and one call when it is spent', () => {
    let over = 0;
    const budget = new OutputBudget(10, () => over++);
    expect([budget.take(6), budget.take(6), budget.take(6)]).toEqual([6, 4, 0]);
    expect(over).toBe(1);
  });

  test('a collector keeps the head, counts everything, writes what the budget allows', async () => {
    const stream = new PassThrough();
    const file = path.join(dir, 'out');
    let over = 0;
    const c = new StreamCollector(stream, 4, new OutputBudget(6, () => over++), file);
    stream.write('abc');
    stream.write('defgh');
    stream.end('ij');
    await c.done;
    expect([c.text(), c.total, over, fs.readFileSync(file, 'utf8')]).toEqual(['abcd', 10, 1, 'abcdef']);
  });
});
