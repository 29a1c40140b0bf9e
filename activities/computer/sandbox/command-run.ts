// One command through the sandbox, from spawn to result: its streams read into their collectors,
// its control group's counters polled (the out-of-memory killer struck, a fork was refused, the CPU
// time is spent: the command is killed and the result says which), its timeout and the caller's
// abort. Killing means SIGKILL to bwrap, our own child: bwrap's --die-with-parent then kills the
// init of the command's pid namespace, and the kernel every process in that namespace, setsid'd
// or daemonised ones included.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { CommandCgroup, CgroupCounters } from './cgroups';
import { OutputBudget, StreamCollector, utf8Head } from './output';
import type { OpenFifo } from './runtime-dir';
import { LimitEnforcement, SandboxCommand, SandboxKill, SandboxResult, SandboxStartError } from './sandbox';

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
}

export interface RunOutcome {
  result: SandboxResult;
  /** Whether both streams ended (their pipes may serve again). */
  streamsEnded: boolean;
}

/** What the status fd said: bwrap reports the command's pid once the sandbox is up, and its exit code. */
function statusReader(stream: Readable): { started: () => boolean; exitCode: () => number | undefined } {
  let text = '';
  stream.on('data', (d: Buffer) => {
    if (text.length < 4096) text += d.toString('utf8');
  });
  stream.on('error', () => undefined);
  return {
    started: () => /"child-pid"\s*:\s*\d+/.test(text),
    exitCode: () => {
      const m = /"exit-code"\s*:\s*(\d+)/.exec(text);
      return m ? Number(m[1]) : undefined;
    },
  };
}

function channelReader(stream: Readable | null, max: number): { text: () => string; done: Promise<void> } {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!stream) return { text: () => '', done: Promise.resolve() };
  stream.on('data', (d: Buffer) => {
    if (size < max) chunks.push(d.subarray(0, max - size));
    size += d.length;
  });
  const done = new Promise<void>((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
    stream.once('error', () => resolve());
  });
  return { text: () => utf8Head(Buffer.concat(chunks), max), done };
}

/** What the counters say the sandbox should end the command for, if anything. */
export function verdict(c: CgroupCounters, cpuSeconds: number): SandboxKill | undefined {
  if (c.oomKills > 0) return 'memory';
  if (c.pidsMaxHits > 0) return 'processes';
  if (c.cpuNs >= cpuSeconds * 1e9) return 'cpu';
  return undefined;
}

function spawnChild(plan: RunPlan) {
  const ch = plan.cmd.channel;
  let child: ChildProcess;
  try {
    child = spawn(plan.argv[0], plan.argv.slice(1), {
      stdio: [
        'ignore',
        plan.stdout.writeFd,
        plan.stderr.writeFd,
        ch ? 'pipe' : 'ignore',
        ch ? 'pipe' : 'ignore',
        'pipe',
      ],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  } finally {
    // The command holds the write ends now; ours would keep the pipes from ever ending.
    fs.closeSync(plan.stdout.writeFd);
    fs.closeSync(plan.stderr.writeFd);
  }
  if (ch) {
    const input = child.stdio[3] as Writable;
    input.on('error', () => undefined); // the command need not read it
    input.end(ch.input);
  }
  return child;
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
    private readonly child: ChildProcess,
    private readonly cgroup?: CommandCgroup,
  ) {}

  kill(reason: SandboxKill): void {
    if (this.reason || this.exited) return;
    this.reason = reason;
    this.child.kill('SIGKILL');
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

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }> {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

export async function runCommand(plan: RunPlan): Promise<RunOutcome> {
  const { cmd, cgroup } = plan;
  const startedAt = performance.now();
  const child = spawnChild(plan);
  const killer = new Killer(child, cgroup);
  const budget = new OutputBudget(cmd.limits.maxOutputBytes, () => killer.kill('output'));
  const out = new StreamCollector(plan.stdout.reader, cmd.keepBytes, budget, cmd.outputFiles?.stdout);
  const err = new StreamCollector(plan.stderr.reader, cmd.keepBytes, budget, cmd.outputFiles?.stderr);
  const status = statusReader((child.stdio as unknown as Readable[])[5]);
  const channel = channelReader(cmd.channel ? (child.stdio[4] as Readable) : null, cmd.channel?.maxOutputBytes ?? 0);
  const disarm = watch(plan, killer);
  const exit = await exitOf(child);
  killer.exited = true;
  disarm();
  const streamsEnded = await within(Promise.all([out.done, err.done, channel.done]), plan.drainMs);
  if (exit.error) throw new SandboxStartError(`could not start the sandbox: ${exit.error.message}`);
  const ours = killer.reason;
  if (!ours && !status.started())
    throw new SandboxStartError(`the sandbox did not start: ${err.text().trim() || `exit code ${exit.code}`}`);
  const exitCode = ours ? null : (status.exitCode() ?? exit.code);
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
    ...(cmd.channel ? { channelOutput: channel.text() } : {}),
    enforcement: plan.enforcement,
  };
  return { result, streamsEnded };
}
