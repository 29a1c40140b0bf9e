// The sandbox's limits on a command's processes taken together, by control groups: memory (the
// kernel's out-of-memory killer acts in the group alone), processes (fork fails beyond), CPU time
// (measured for the group; the sandbox kills at the limit). A command has a group of its own,
// which it joins before it can fork (the spawn script writes its own pid into each group's
// cgroup.procs, then execs bwrap). Groups nest under the worker's own group of each hierarchy
// (cgroup v1) or under a delegated cgroup v2 folder, so a deployment's limits on the worker hold
// for its sandboxes too. docs/computer.md, "Sandbox", says what this host measured (joining a
// group costs an RCU grace period when the machine was idle: about 12 ms here).
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxLimits } from './sandbox';

/** What the group's counters say since the group was last reset. */
export interface CgroupCounters {
  /** Processes the out-of-memory killer ended in the group. */
  oomKills: number;
  /** Forks refused at pids.max. */
  pidsMaxHits: number;
  /** CPU time of the group, nanoseconds. */
  cpuNs: number;
}

export type GroupLimits = Pick<SandboxLimits, 'memoryBytes' | 'processes'>;

/** What a cgroup version does with one group's files. */
interface GroupFiles {
  dirs: string[];
  procsFiles: string[];
  setLimits(limits: GroupLimits): void;
  /** The kernel's counters, cumulative since the group was made. */
  raw(): CgroupCounters;
  kill(): void;
}

export interface CgroupDriver {
  /** e.g. 'cgroup v1' or 'cgroup v2'. */
  kind: string;
  /** Where the groups are made (one folder per hierarchy). */
  parents: string[];
  /** Makes a group (its limits not yet set: CommandCgroup.setLimits). */
  create(name: string): CommandCgroup;
}

const read = (file: string): string => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** The number after `key` in a flat-keyed cgroup file ("oom_kill 3\n..."), 0 when absent. */
export function keyedCount(text: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

const pidsOf = (procsFile: string): number[] =>
  read(procsFile)
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((n) => n > 0);

function killPids(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One command's group, in every hierarchy it spans. */
export class CommandCgroup {
  private base: CgroupCounters = { oomKills: 0, pidsMaxHits: 0, cpuNs: 0 };

  constructor(private readonly files: GroupFiles) {}

  /** The cgroup.procs files the command's first process writes its pid into. */
  get procsFiles(): string[] {
    return this.files.procsFiles;
  }

  setLimits(limits: GroupLimits): void {
    this.files.setLimits(limits);
  }

  /** Counts from here on (the kernel's counters only grow). */
  reset(): void {
    this.base = this.files.raw();
  }

  counters(): CgroupCounters {
    const now = this.files.raw();
    return {
      oomKills: now.oomKills - this.base.oomKills,
      pidsMaxHits: now.pidsMaxHits - this.base.pidsMaxHits,
      cpuNs: now.cpuNs - this.base.cpuNs,
    };
  }

  /** Whether any process is still in the group. */
  populated(): boolean {
    return this.files.procsFiles.some((f) => pidsOf(f).length > 0);
  }

  /**
   * SIGKILLs every process of the group at once where the kernel can (cgroup v2's cgroup.kill). On
   * v1 it does nothing: killing bwrap ends the command's pid namespace, which is every process of
   * it, and killing pids read from cgroup.procs could hit a pid reused by another process.
   */
  kill(): void {
    this.files.kill();
  }

  /**
   * Waits up to `waitMs` for the group to be empty (its last processes leave it a few milliseconds
   * after bwrap exits), then, a last resort for a process that outlived its pid namespace,
   * SIGKILLs what is left and waits as long again. Whether it is empty.
   */
  async drain(waitMs = 2000): Promise<boolean> {
    for (const lastResort of [false, true]) {
      if (lastResort) killPids([...new Set(this.files.procsFiles.flatMap(pidsOf))]);
      const deadline = Date.now() + waitMs;
      while (this.populated()) {
        if (Date.now() >= deadline) break;
        await sleep(5);
      }
      if (!this.populated()) return true;
    }
    return false;
  }

  /** Removes the (empty) group's folders; throws if the kernel refuses (a process left). */
  remove(): void {
    for (const dir of this.files.dirs)
      try {
        fs.rmdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
  }
}

function writeLimit(file: string, value: string | number, optional = false): void {
  try {
    fs.writeFileSync(file, String(value));
  } catch (err) {
    if (!(optional && (err as NodeJS.ErrnoException).code === 'ENOENT')) throw err;
  }
}

/** cgroup v1: a group in each of the memory, pids and cpuacct hierarchies (their parents given). */
export function cgroupV1(parents: { memory: string; pids: string; cpuacct: string }): CgroupDriver {
  return {
    kind: 'cgroup v1',
    parents: [parents.memory, parents.pids, parents.cpuacct],
    create(name) {
      const [mem, pids, cpu] = [parents.memory, parents.pids, parents.cpuacct].map((p) => path.join(p, name));
      for (const dir of [mem, pids, cpu]) fs.mkdirSync(dir, { recursive: true });
      const memLimit = (bytes: number) => writeLimit(path.join(mem, 'memory.limit_in_bytes'), bytes);
      // Swap too (memsw counts memory plus swap) where the kernel accounts it; memsw may never be
      // below the memory limit, so which goes first depends on whether the limit rises.
      const swLimit = (bytes: number) => writeLimit(path.join(mem, 'memory.memsw.limit_in_bytes'), bytes, true);
      return new CommandCgroup({
        dirs: [mem, pids, cpu],
        procsFiles: [mem, pids, cpu].map((d) => path.join(d, 'cgroup.procs')),
        setLimits(limits) {
          try {
            memLimit(limits.memoryBytes);
            swLimit(limits.memoryBytes);
          } catch {
            swLimit(limits.memoryBytes);
            memLimit(limits.memoryBytes);
          }
          writeLimit(path.join(pids, 'pids.max'), limits.processes);
        },
        raw: () => ({
          oomKills: keyedCount(read(path.join(mem, 'memory.oom_control')), 'oom_kill'),
          pidsMaxHits: keyedCount(read(path.join(pids, 'pids.events')), 'max'),
          cpuNs: Number(read(path.join(cpu, 'cpuacct.usage')).trim()) || 0,
        }),
        kill: () => undefined,
      });
    },
  };
}

/** cgroup v2: one group under `parent`, whose cgroup.subtree_control must enable memory and pids. */
export function cgroupV2(parent: string): CgroupDriver {
  return {
    kind: 'cgroup v2',
    parents: [parent],
    create(name) {
      const dir = path.join(parent, name);
      fs.mkdirSync(dir, { recursive: true });
      const procs = path.join(dir, 'cgroup.procs');
      return new CommandCgroup({
        dirs: [dir],
        procsFiles: [procs],
        setLimits(limits) {
          writeLimit(path.join(dir, 'memory.max'), limits.memoryBytes);
          writeLimit(path.join(dir, 'memory.swap.max'), 0, true);
          writeLimit(path.join(dir, 'pids.max'), limits.processes);
        },
        raw: () => ({
          oomKills: keyedCount(read(path.join(dir, 'memory.events')), 'oom_kill'),
          pidsMaxHits: keyedCount(read(path.join(dir, 'pids.events')), 'max'),
          cpuNs: keyedCount(read(path.join(dir, 'cpu.stat')), 'usage_usec') * 1000,
        }),
        kill() {
          try {
            fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1');
          } catch {
            killPids(pidsOf(procs)); // kernels before 5.14
          }
        },
      });
    },
  };
}

/**
 * Makes `parent` (a cgroup v2 folder) ready to hold command groups: it must offer memory and pids
 * (cgroup.controllers), and we enable them (and cpu, for its statistics, when offered) for its
 * children. Throws saying what is missing.
 */
export function prepareV2Parent(parent: string): void {
  fs.mkdirSync(parent, { recursive: true });
  const offered = read(path.join(parent, 'cgroup.controllers')).split(/\s+/).filter(Boolean);
  const missing = ['memory', 'pids'].filter((c) => !offered.includes(c));
  if (missing.length)
    throw new Error(`${parent} does not offer the ${missing.join(' and ')} controller (cgroup.controllers)`);
  const enabled = read(path.join(parent, 'cgroup.subtree_control')).split(/\s+/);
  const wanted = ['memory', 'pids', ...(offered.includes('cpu') ? ['cpu'] : [])].filter((c) => !enabled.includes(c));
  if (wanted.length)
    fs.writeFileSync(path.join(parent, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
}

/**
 * Removes the empty groups under `parents` that `stale` says were left by a worker no longer
 * running (see the sandbox's group names). A live worker's groups, even empty ones, are left alone.
 */
export function sweepStale(parents: string[], stale: (name: string) => boolean): number {
  let removed = 0;
  for (const parent of parents) {
    let names: string[];
    try {
      names = fs
        .readdirSync(parent, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      continue;
    }
    for (const name of names.filter(stale)) {
      try {
        fs.rmdirSync(path.join(parent, name));
        removed++;
      } catch {
        // busy (a process left in it) or gone: the next sweep tries again
      }
    }
  }
  return removed;
}
