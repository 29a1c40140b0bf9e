// One command through the sandbox, from spawn to result: its streams read into their collectors,
// its control group's counters polled (the out-of-memory killer struck, a fork was refused, the CPU
// time is spent: the command is killed and the result says which), its timeout and the caller's
// abort. Killing means SIGKILL to bwrap, the spawner's child (spawner.ts): bwrap's
// --die-with-parent then kills the init of the command's pid namespace, and the kernel every
// process in that namespace, setsid'd or daemonised ones included.
import fs from 'node:fs';
import type { CommandCgroup, CgroupCounters } from './cgroups';
import { OutputBudget, StreamCollector, utf8Head } from './output';
import type { OpenFifo } from './runtime-dir';
import { LimitEnforcement, SandboxCommand, SandboxKill, SandboxResult, SandboxStartError } from './sandbox';
import type { Spawned, SpawnExit, Spawner } from './spawner';

/** The command's environment as bwrap starts (bwrap-args.ts sets the command's own). */
const SPAWN_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

export interface RunPlan {
  /** The spawn script's command line (spawn-script.ts). */
  argv: string[];
  cmd: SandboxCommand;
  cgroup?: CommandCgroup;
  stdout: OpenFifo;
  stderr: OpenFifo;
  pollMs: number;
  enforcement: LimitEnforcement;
  /** How long to wait for the streams' end after the sandbox exited before giving up on them. */
  drainMs: number;
  spawner: Spawner;
}

export interface RunOutcome {
  result: SandboxResult;
  /** Whether both streams ended (their pipes may serve again). */
  streamsEnded: boolean;
}

/** What the status fd said: bwrap reports the command's pid once the sandbox is up, and its exit code. */
function statusOf(text: string): { started: boolean; exitCode?: number } {
  const m = /"exit-code"\s*:\s*(\d+)/.exec(text);
  return { started: /"child-pid"\s*:\s*\d+/.test(text), exitCode: m ? Number(m[1]) : undefined };
}

/** What the counters say the sandbox should end the command for, if anything. */
export function verdict(c: CgroupCounters, cpuSeconds: number): SandboxKill | undefined {
  if (c.oomKills > 0) return 'memory';
  if (c.pidsMaxHits > 0) return 'processes';
  if (c.cpuNs >= cpuSeconds * 1e9) return 'cpu';
  return undefined;
}

/** Starts the command through the spawner; our ends of its output fifos are closed either way. */
async function spawnCommand(plan: RunPlan): Promise<Spawned> {
  const ch = plan.cmd.channel;
  try {
    return await plan.spawner.spawn({
      argv: plan.argv,
      env: SPAWN_ENV,
      stdout: plan.stdout.path,
      stderr: plan.stderr.path,
      ...(ch ? { channel: { input: ch.input, max: ch.maxOutputBytes } } : {}),
    });
  } catch (err) {
    throw new SandboxStartError(`could not start the sandbox: ${(err as Error).message}`);
  } finally {
    // The command holds the write ends now; ours would keep the pipes from ever ending.
    fs.closeSync(plan.stdout.writeFd);
    fs.closeSync(plan.stderr.writeFd);
  }
}

/** Waits for `p`, at most `ms`; whether it settled in time. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const ok = await Promise.race([p.then(() => true as const), late]);
  clearTimeout(timer);
  return ok;
}

/** Ends the command at most once, for the first reason; a no-op once it has exited. */
class Killer {
  reason?: SandboxKill;
  exited = false;
  constructor(
    private readonly child: Spawned,
    private readonly cgroup?: CommandCgroup,
  ) {}

  kill(reason: SandboxKill): void {
    if (this.reason || this.exited) return;
    this.reason = reason;
    this.child.kill();
    this.cgroup?.kill();
  }
}

/** Arms the timeout, the counters' poll and the abort; returns what disarms them. */
function watch(plan: RunPlan, killer: Killer): () => void {
  const { cmd, cgroup } = plan;
  // setTimeout takes at most 2^31 - 1 ms (beyond, node fires at once).
  const timer = setTimeout(() => killer.kill('timeout'), Math.min(cmd.timeoutMs, 2 ** 31 - 1));
  const poll = cgroup
    ? setInterval(() => {
        const v = verdict(cgroup.counters(), cmd.limits.cpuSeconds);
        if (v) killer.kill(v);
      }, plan.pollMs)
    : undefined;
  const onAbort = () => killer.kill('cancel');
  cmd.signal?.addEventListener('abort', onAbort, { once: true });
  if (cmd.signal?.aborted) onAbort();
  return () => {
    clearTimeout(timer);
    if (poll) clearInterval(poll);
    cmd.signal?.removeEventListener('abort', onAbort);
  };
}

/** The command's end; the spawner's own end instead means the command ended with it. */
async function exitOf(child: Spawned): Promise<SpawnExit & { error?: Error }> {
  try {
    return await child.exited;
  } catch (error) {
    return { code: null, signal: null, status: '', channel: Buffer.alloc(0), error: error as Error };
  }
}

export async function runCommand(plan: RunPlan): Promise<RunOutcome> {
  const { cmd, cgroup } = plan;
  const startedAt = performance.now();
  const child = await spawnCommand(plan);
  const killer = new Killer(child, cgroup);
  const budget = new OutputBudget(cmd.limits.maxOutputBytes, () => killer.kill('output'));
  const out = new StreamCollector(plan.stdout.reader, cmd.keepBytes, budget, cmd.outputFiles?.stdout);
  const err = new StreamCollector(plan.stderr.reader, cmd.keepBytes, budget, cmd.outputFiles?.stderr);
  const disarm = watch(plan, killer);
  const exit = await exitOf(child);
  killer.exited = true;
  disarm();
  const streamsEnded = await within(Promise.all([out.done, err.done]), plan.drainMs);
  const status = statusOf(exit.status);
  if (exit.error) throw new SandboxStartError(`the command's sandbox ended with its spawner: ${exit.error.message}`);
  const ours = killer.reason;
  if (!ours && !status.started)
    throw new SandboxStartError(`the sandbox did not start: ${err.text().trim() || `exit code ${exit.code}`}`);
  const exitCode = ours ? null : (status.exitCode ?? exit.code);
  // Ended on its own, yet the sandbox had a hand in it: the out-of-memory killer ended one of its
  // processes, a fork was refused at the process limit (a fork bomb started in the background
  // whose shell then exited: the pid namespace's end killed the rest before the poll saw it), or
  // (without a control group) RLIMIT_CPU ended it, by SIGXCPU (24): 128 + 24.
  let killed = ours;
  const counters = cgroup?.counters();
  if (!killed && counters && counters.oomKills > 0) killed = 'memory';
  if (!killed && counters && counters.pidsMaxHits > 0) killed = 'processes';
  if (!killed && !cgroup && exitCode === 152) killed = 'cpu';
  const result: SandboxResult = {
    exitCode,
    signal: ours ? 'SIGKILL' : exit.signal,
    stdout: out.text(),
    stderr: err.text(),
    stdoutBytes: out.total,
    stderrBytes: err.total,
    durationMs: performance.now() - startedAt,
    ...(killed ? { killed } : {}),
    ...(cmd.channel ? { channelOutput: utf8Head(exit.channel, cmd.channel.maxOutputBytes) } : {}),
    enforcement: plan.enforcement,
  };
  return { result, streamsEnded };
}
