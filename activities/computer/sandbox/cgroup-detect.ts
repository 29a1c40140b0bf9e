// Which control groups this host lets the sandbox use, found once per process: cgroup v1 when the
// memory, pids and cpuacct hierarchies are mounted and the worker's own group in each is writable
// (root, or delegated); else cgroup v2 under a delegated folder (given, or under the worker's own
// group when that already passes memory and pids down); else none, and the sandbox falls back to
// rlimits. Each candidate is tried for real (a group made, limited and removed) before it is used.
import fs from 'node:fs';
import path from 'node:path';
import { cgroupV1, cgroupV2, CgroupDriver, prepareV2Parent } from './cgroups';

export interface MountEntry {
  /** The folder of the mounted file system shown at mountPoint (a cgroup path for cgroup mounts). */
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

/** /proc/self/mountinfo's lines (proc(5)). */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const f = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
    out.push({ root: unescape(f[3]), mountPoint: unescape(f[4]), fsType, superOptions: superOptions.split(',') });
  }
  return out;
}

/** /proc/self/cgroup: the group of each v1 controller, and the v2 group ("0::/path"). */
export function parseProcCgroup(text: string): { v1: Map<string, string>; v2?: string } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') v2 = m[3];
    else for (const c of m[2].split(',')) v1.set(c, m[3]);
  }
  return { v1, v2 };
}

/** The host folder of group `group` in a hierarchy mounted as `mount` (whose root may be a group itself, in containers). */
function folderOf(mount: MountEntry, group: string): string | undefined {
  const root = mount.root === '/' ? '' : mount.root;
  if (root && group !== root && !group.startsWith(`${root}/`)) return undefined;
  return path.join(mount.mountPoint, group.slice(root.length));
}

export interface DetectOptions {
  /** A delegated cgroup v2 folder for the sandboxes' groups (skips detection). */
  v2Parent?: string;
  /** Name of the folder made under the worker's own group; default agent-sandbox. */
  folder?: string;
  /** Name of the group made and removed to try a candidate. */
  probeName: string;
  /** Read /proc/self/* from here (tests). */
  proc?: string;
}

function v1Candidate(mounts: MountEntry[], own: Map<string, string>, folder: string): CgroupDriver | string {
  const parents: Record<string, string> = {};
  for (const c of ['memory', 'pids', 'cpuacct']) {
    const mount = mounts.find((m) => m.fsType === 'cgroup' && m.superOptions.includes(c));
    const group = own.get(c);
    const dir = mount && group !== undefined ? folderOf(mount, group) : undefined;
    if (!dir) return `no cgroup v1 ${c} hierarchy`;
    parents[c] = path.join(dir, folder);
  }
  return cgroupV1(parents as { memory: string; pids: string; cpuacct: string });
}

function v2Candidate(mounts: MountEntry[], own: string | undefined, folder: string): CgroupDriver | string {
  const mount = mounts.find((m) => m.fsType === 'cgroup2');
  const dir = mount && own !== undefined ? folderOf(mount, own) : undefined;
  if (!dir) return 'no cgroup v2 hierarchy';
  const enabled = (() => {
    try {
      return fs.readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
    } catch {
      return [];
    }
  })();
  if (!enabled.includes('memory') || !enabled.includes('pids'))
    return `the worker's cgroup v2 group ${dir} does not pass memory and pids to its children (give the sandbox a delegated folder)`;
  return cgroupV2(path.join(dir, folder));
}

/** Makes and removes one group with the driver: the proof that it works here. */
function tryDriver(driver: CgroupDriver, probeName: string): void {
  if (driver.kind === 'cgroup v2') prepareV2Parent(driver.parents[0]);
  else for (const p of driver.parents) fs.mkdirSync(p, { recursive: true });
  const group = driver.create(probeName);
  try {
    group.setLimits({ memoryBytes: 64 * 1024 * 1024, processes: 8 });
  } finally {
    group.remove();
  }
}

/** The driver this host allows, or why none. */
export function detectCgroups(opts: DetectOptions): { driver: CgroupDriver } | { reason: string } {
  const proc = opts.proc ?? '/proc';
  const folder = opts.folder ?? 'agent-sandbox';
  const reasons: string[] = [];
  const candidates: (CgroupDriver | string)[] = [];
  if (opts.v2Parent) candidates.push(cgroupV2(opts.v2Parent));
  else {
    let mounts: MountEntry[];
    let own: ReturnType<typeof parseProcCgroup>;
    try {
      mounts = parseMountinfo(fs.readFileSync(`${proc}/self/mountinfo`, 'utf8'));
      own = parseProcCgroup(fs.readFileSync(`${proc}/self/cgroup`, 'utf8'));
    } catch (err) {
      return { reason: `cannot read ${proc}/self: ${(err as Error).message}` };
    }
    candidates.push(v1Candidate(mounts, own.v1, folder), v2Candidate(mounts, own.v2, folder));
  }
  for (const c of candidates) {
    if (typeof c === 'string') {
      reasons.push(c);
      continue;
    }
    try {
      tryDriver(c, opts.probeName);
      return { driver: c };
    } catch (err) {
      reasons.push(`${c.kind} at ${c.parents.join(', ')}: ${(err as Error).message}`);
    }
  }
  return { reason: reasons.join('; ') };
}
