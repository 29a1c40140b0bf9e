// The local sandbox: bubblewrap on this machine, limits by control groups where the host allows
// them (else rlimits, as the log and each result's `enforcement` say). docs/computer.md,
// "Sandbox", describes what a command sees and what each limit uses; "Threat model" what it is
// meant to stop.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../../src/common/logger';
import type { OutboundPolicy } from '../../../src/common/outbound/policy';
import type { ProxyDecision } from '../../../src/common/outbound/proxy';
import { bwrapArgs } from './bwrap-args';
import { detectCgroups } from './cgroup-detect';
import { CgroupDriver, CommandCgroup, sweepStale } from './cgroups';
import { runCommand } from './command-run';
import { HostLayout, readHostLayout } from './host-layout';
import { SandboxNetwork } from './network';
import { alive, RuntimeDir } from './runtime-dir';
import {
  LimitEnforcement,
  Sandbox,
  SandboxCommand,
  SandboxResult,
  SandboxStartError,
  SandboxUnavailableError,
} from './sandbox';
import { rlimits, spawnArgv } from './spawn-script';
import { Spawner } from './spawner';

export interface LocalSandboxOptions {
  /** uid and gid of the command inside the sandbox; default 1000. */
  uid?: number;
  gid?: number;
  /** Size of the sandbox's /tmp (and /dev/shm), bytes; default 64 MiB. */
  tmpBytes?: number;
  /** 'auto' (default): cgroup v1 or v2 as the host allows, else rlimits; 'off': rlimits only; or a delegated cgroup v2 folder. */
  cgroups?: 'auto' | 'off' | { v2Parent: string };
  /** How often a command's control group counters are read, ms; default 100. */
  pollMs?: number;
  logger?: Logger;
  /** Where the worker's private folder for its sandboxes goes; default the host's temporary folder. */
  runtimeParent?: string;
  /** The outbound policy for commands that ask for network (without it, such a command is refused). */
  network?: { policy: OutboundPolicy; onDecision?: (d: ProxyDecision) => void };
}

const STATUS_FD = 5;
/** Time a command's streams get to end after bwrap exited (they end at once: the pid namespace is gone). */
const DRAIN_MS = 5000;

/** The first executable `name` on PATH (or the usual system folders). */
function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

function enforcementOf(driver: CgroupDriver | undefined, why: string): LimitEnforcement {
  if (driver)
    return {
      memory: `${driver.kind} (memory of all its processes)`,
      processes: `${driver.kind} (pids.max)`,
      cpu: `${driver.kind} (CPU time of all its processes), RLIMIT_CPU per process as a backstop`,
      fileSize: 'RLIMIT_FSIZE',
    };
  const root = process.getuid?.() === 0;
  return {
    memory: `RLIMIT_AS per process (address space, not memory used; no control group: ${why})`,
    processes: root
      ? 'none (RLIMIT_NPROC does not bind a worker running as root; no control group)'
      : "RLIMIT_NPROC (counts every process of the worker's user)",
    cpu: 'RLIMIT_CPU per process',
    fileSize: 'RLIMIT_FSIZE',
  };
}

/** The sandbox's facts about this host, found once by probe(). */
interface Ready {
  bwrap: string;
  layout: HostLayout;
  runtime: RuntimeDir;
  cgroups?: CgroupDriver;
  enforcement: LimitEnforcement;
  /** Starts the commands, from a process far smaller than the worker (spawner-process.js). */
  spawner: Spawner;
}

/**
 * Names of this process's control groups: `w<pid>-<instance>-<n>`. The instance tells this
 * sandbox's groups from those of an earlier worker that had the same pid (a container restarted).
 */
const groupPrefix = (instance: string) => `w${process.pid}-${instance}-`;

/** Whether a group was left by a worker that no longer runs. */
function staleGroup(name: string, instance: string): boolean {
  const m = /^w(\d+)-([0-9a-f]+)-/.exec(name);
  if (!m) return false;
  return Number(m[1]) === process.pid ? m[2] !== instance : !alive(Number(m[1]));
}

class BwrapSandbox implements Sandbox {
  readonly name = 'bubblewrap';
  private ready?: Promise<Ready>;
  private readonly running = new Set<Promise<SandboxResult>>();
  private groups = 0;
  private readonly removing = new Set<Promise<void>>();
  private readonly instance = crypto.randomBytes(4).toString('hex');
  private readonly uid: number;
  private readonly gid: number;
  private readonly network?: SandboxNetwork;

  constructor(private readonly options: LocalSandboxOptions) {
    this.uid = options.uid ?? 1000;
    this.gid = options.gid ?? 1000;
    if (options.network) this.network = new SandboxNetwork(options.network.policy, options.network.onDecision);
  }

  async probe(): Promise<LimitEnforcement> {
    return (await this.prepare()).enforcement;
  }

  private prepare(): Promise<Ready> {
    this.ready ??= this.setUp().catch((err) => {
      this.ready = undefined; // a later call tries again (bwrap installed since, say)
      throw err;
    });
    return this.ready;
  }

  private async setUp(): Promise<Ready> {
    const bwrap = which('bwrap');
    if (!bwrap)
      throw new SandboxUnavailableError(
        'bubblewrap is not installed: apt-get install bubblewrap (the bash tool needs it)',
      );
    const found = this.findCgroups();
    const driver = 'driver' in found ? found.driver : undefined;
    const ready: Ready = {
      bwrap,
      layout: readHostLayout(),
      runtime: RuntimeDir.create(this.uid, this.gid, this.options.runtimeParent),
      cgroups: driver,
      enforcement: enforcementOf(driver, 'reason' in found ? found.reason : ''),
      spawner: new Spawner(),
    };
    try {
      await this.tryWithFallback(ready);
    } catch (err) {
      ready.spawner.close();
      throw err;
    }
    this.options.logger?.info(
      { sandbox: this.name, bwrap, enforcement: ready.enforcement, cgroups: ready.cgroups?.parents },
      'sandbox ready',
    );
    return ready;
  }

  /** tryOnce, and again without control groups if they were what failed. */
  private async tryWithFallback(ready: Ready): Promise<void> {
    try {
      await this.tryOnce(ready);
    } catch (err) {
      if (!ready.cgroups) throw err;
      // Groups could be made but not joined, say: the sandbox still works with rlimits.
      this.options.logger?.warn({ err: (err as Error).message }, 'sandbox: control groups fail here, rlimits only');
      ready.cgroups = undefined;
      ready.enforcement = enforcementOf(undefined, (err as Error).message);
      await this.tryOnce(ready);
    }
  }

  private findCgroups(): ReturnType<typeof detectCgroups> {
    const opt = this.options.cgroups ?? 'auto';
    if (opt === 'off') return { reason: 'turned off' };
    const found = detectCgroups({
      probeName: `${groupPrefix(this.instance)}probe`,
      ...(typeof opt === 'object' ? { v2Parent: opt.v2Parent } : {}),
    });
    if ('driver' in found) {
      const removed = sweepStale(found.driver.parents, (name) => staleGroup(name, this.instance));
      if (removed) this.options.logger?.info({ removed }, 'sandbox: removed control groups left by a stopped worker');
    } else this.options.logger?.warn({ reason: found.reason }, 'sandbox: no control groups, limits by rlimits only');
    return found;
  }

  /** Runs `true` in a scratch workspace: the proof that bwrap works here, or the error that says why not. */
  private async tryOnce(ready: Ready): Promise<void> {
    const scratch = fs.mkdtempSync(path.join(ready.runtime.dir, 'probe-'));
    try {
      const r = await this.runReady(ready, {
        argv: ['true'],
        workspace: scratch,
        timeoutMs: 30_000,
        limits: { memoryBytes: 256 << 20, processes: 32, cpuSeconds: 10, maxOutputBytes: 1 << 20, fileSizeBytes: 0 },
        keepBytes: 4096,
      });
      if (r.exitCode !== 0) throw new SandboxStartError(`exit code ${r.exitCode}: ${r.stderr.trim()}`);
    } catch (err) {
      throw new SandboxUnavailableError(
        `bubblewrap cannot make a sandbox on this host (${(err as Error).message}). It needs user namespaces: ` +
          'sysctl user.max_user_namespaces above 0 (and kernel.unprivileged_userns_clone=1 where that exists, ' +
          'kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu); in a container, one allowed to make namespaces',
      );
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }

  async run(cmd: SandboxCommand): Promise<SandboxResult> {
    const running = this.prepare().then((ready) => this.runReady(ready, cmd));
    this.running.add(running);
    try {
      return await running;
    } finally {
      this.running.delete(running);
    }
  }

  async close(): Promise<void> {
    const ready = await this.ready?.catch(() => undefined);
    await Promise.allSettled([...this.running]);
    await Promise.allSettled([...this.removing]);
    await this.network?.close();
    ready?.spawner.close();
    ready?.runtime.remove();
    this.ready = undefined;
  }

  private async runReady(ready: Ready, cmd: SandboxCommand): Promise<SandboxResult> {
    if (!fs.statSync(cmd.workspace, { throwIfNoEntry: false })?.isDirectory())
      throw new SandboxStartError(`the workspace folder ${cmd.workspace} does not exist`);
    if (!ready.runtime.intact()) ready.runtime = RuntimeDir.create(this.uid, this.gid, this.options.runtimeParent);
    if (cmd.network && !this.network)
      throw new SandboxStartError('this sandbox has no outbound policy, so it cannot give a command network');
    const network = cmd.network ? await this.network!.paths(ready.runtime.dir) : undefined;
    const args = bwrapArgs(
      ready.layout,
      {
        uid: this.uid,
        gid: this.gid,
        tmpBytes: this.options.tmpBytes ?? 64 << 20,
        etcDir: ready.runtime.etcDir,
        etcFiles: ready.runtime.etcFiles,
        statusFd: STATUS_FD,
        network,
      },
      cmd,
    );
    const cgroup = ready.cgroups && this.newGroup(ready.cgroups, cmd.limits);
    try {
      return await this.spawnIn(ready, cmd, args, cgroup);
    } finally {
      if (cgroup) {
        const removing = this.removeGroup(cgroup).finally(() => this.removing.delete(removing));
        this.removing.add(removing);
      }
    }
  }

  private newGroup(driver: CgroupDriver, limits: SandboxCommand['limits']): CommandCgroup {
    const group = driver.create(`${groupPrefix(this.instance)}${++this.groups}`);
    try {
      group.setLimits(limits);
    } catch (err) {
      group.remove();
      throw err;
    }
    group.reset();
    return group;
  }

  /** In the background: the group's last processes leave it a few milliseconds after bwrap exits, and the result need not wait. */
  private async removeGroup(group: CommandCgroup): Promise<void> {
    try {
      if (!(await group.drain())) throw new Error('processes are left in it');
      group.remove();
    } catch (err) {
      this.options.logger?.warn(
        { err: (err as Error).message, groups: group.procsFiles },
        'sandbox: a control group could not be removed',
      );
    }
  }

  private async spawnIn(ready: Ready, cmd: SandboxCommand, args: string[], cgroup?: CommandCgroup) {
    const limits = rlimits(cmd.limits, { cgroup: !!cgroup, root: process.getuid?.() === 0 });
    const stdout = await ready.runtime.openFifo();
    const stderr = await ready.runtime.openFifo().catch((err) => {
      ready.runtime.releaseFifo(stdout, false);
      throw err;
    });
    let ended = false;
    try {
      const { result, streamsEnded } = await runCommand({
        argv: spawnArgv(ready.bwrap, cgroup?.procsFiles ?? [], limits, args),
        cmd,
        cgroup,
        stdout,
        stderr,
        pollMs: this.options.pollMs ?? 100,
        enforcement: ready.enforcement,
        drainMs: DRAIN_MS,
        spawner: ready.spawner,
      });
      ended = streamsEnded;
      if (!streamsEnded) this.options.logger?.warn('sandbox: output streams still open after the command ended');
      return result;
    } finally {
      ready.runtime.releaseFifo(stdout, ended);
      ready.runtime.releaseFifo(stderr, ended);
    }
  }
}

/** The local sandbox (bubblewrap). Nothing happens until probe() or the first run(). */
export function createLocalSandbox(options: LocalSandboxOptions = {}): Sandbox {
  return new BwrapSandbox(options);
}
