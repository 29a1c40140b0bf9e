// The computer phase: how long a `bash` tool call takes to start its process, against what the
// machine allows for it: a bare sandbox spawn plus one activity round, measured in the same run.
//
// Each run's scripted model makes COMPUTER_ROUNDS sequential bash calls of `date +%s%N`, which
// prints the wall clock (ns) as its process starts in the sandbox; the k-th call's output comes
// back in the model's request k+1. Per call:
//   sample = the stamp `date` printed - the model's tool-call message was written (ToolCallClock).
// Both are this machine's CLOCK_REALTIME, so the epoch times compare: `date` reads it in the
// sandbox (a pid, mount or user namespace has no clock of its own, and a time namespace would not
// move CLOCK_REALTIME), epochNow() in this process (the realtime clock read at its start, carried
// on by the monotonic clock, which NTP slews alike; the phase logs Date.now() - epochNow() to
// show a step of the wall clock, which would not be slewed).
// After each run, in this process, the same command the same number of times, timed the same way
// from just before the spawn: through createLocalSandbox() (the worker's sandbox), and through a
// bare bwrap command line (namespaces and the host's /usr, no wrapper, no limits); then a floor
// run (dag.ts) of as many activity rounds. The bare spawns are paced at the run's own interval
// between process starts: the sandbox's control-group join costs more after idle
// (docs/computer.md, "Cost"), and back to back they would be timed warmer than the service's are.
// Target: p99 <= FLOOR_RATIO x (p99 of the bare sandbox spawn + p99 of one activity round).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { tsToMs } from '@temporalio/common/lib/time';
import { bashLimits } from '../activities/computer/bash';
import { createLocalSandbox, type Sandbox, type SandboxLimits } from '../activities/computer/sandbox';
import { readHostLayout } from '../activities/computer/sandbox/host-layout';
import { loadConfig } from '../src/common/config';
import { completedTaskId, epochNow, fmtMiB, fmtMs, percentile, readMem, sleep } from './measure';
import { judgeAgainstFloor, Row, rowOf } from './report';
import type { Bench } from './stack';
import { pausesBetween, workerPauses } from './worker-pauses';

export const COMPUTER_ROUNDS = 20;
export const COMPUTER_LABEL = 'bash tool call -> process start (tool-call message -> `date` in the sandbox)';
export const BARE_SANDBOX_LABEL = 'baseline: bare sandbox spawn (sandbox.run called -> process start)';
export const BARE_BWRAP_LABEL = 'baseline: bare bwrap command line (spawn -> process start)';
export const ROUND_FLOOR_LABEL = 'floor: one activity round (bare SDK workflow: returned -> next started)';
const COMMAND = ['date', '+%s%N'];
const execFileP = promisify(execFile);

/** Epoch ms of the line `date +%s%N` printed (ns since the epoch) in `text`, or undefined. */
export function stampMs(text: string): number | undefined {
  const m = /(?:^|\n)(\d{19})(?:\n|$)/.exec(text);
  // Through BigInt: ns since the epoch are beyond a double's exact integers.
  return m ? Number(BigInt(m[1]) / 1000n) / 1000 : undefined;
}

/** The target's floor: a row whose p99 is the sum of the two floors' p99s (what the target adds up). */
export function sumFloor(spawn: Row, round: Row): Row {
  const s = {
    count: Math.min(spawn.s.count, round.s.count),
    p50: spawn.s.p50 + round.s.p50,
    p99: spawn.s.p99 + round.s.p99,
    max: spawn.s.max + round.s.max,
    mean: spawn.s.mean + round.s.mean,
  };
  return { label: 'bare sandbox spawn p99 + one activity round p99', concurrency: '1', s, errors: 0 };
}

interface Samples {
  service: number[];
  /** Each call split at the engine's record of its runComputerTool scheduled: before, after. */
  toScheduled: number[];
  fromScheduled: number[];
  /** The after part split at the engine's record of the activity started (handed to a worker's poll). */
  toStarted: number[];
  fromStarted: number[];
  /** Each run's median interval between process starts, the bare spawns' pace. */
  paces: number[];
  sandbox: number[];
  bwrap: number[];
  rounds: number[];
  /** Per row: calls or spawns that gave no sample. */
  errors: { service: number; sandbox: number; bwrap: number };
}

interface ServiceRun {
  /** Per call: its tool-call message, its runComputerTool scheduled (the engine's record, ms resolution), its process start. */
  ends: number[];
  scheduled: number[];
  /** Its runComputerTool started: the engine handed it to a worker's poll (same record, same clock). */
  started: number[];
  starts: number[];
}

/** When the engine recorded each runComputerTool of the task's run scheduled and started (its clock, this machine's), in order. */
async function activityTimes(b: Bench, taskId: string): Promise<{ scheduled: number[]; started: number[] }> {
  const events = (await (await b.temporal()).workflow.getHandle(taskId).fetchHistory()).events ?? [];
  const scheduled = events.filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runComputerTool',
  );
  const startedBy = new Map(
    events
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => [String(e.activityTaskStartedEventAttributes!.scheduledEventId), tsToMs(e.eventTime)]),
  );
  return {
    scheduled: scheduled.map((e) => tsToMs(e.eventTime)),
    started: scheduled.map((e) => startedBy.get(String(e.eventId)) ?? NaN),
  };
}

/** One run through the service, its calls' stamps; undefined (logged) when it went wrong. */
async function serviceRun(b: Bench, tag: string): Promise<ServiceRun | undefined> {
  b.mcpClock.ends = [];
  b.mcpClock.on = true;
  const message = `[[tool name=bash rounds=${COMPUTER_ROUNDS} args={"command":"${COMMAND.join(' ')}"}]] ${tag}`;
  const r = await b.post({ message, tools: ['bash'] }, 120_000);
  b.mcpClock.on = false;
  const ends = b.mcpClock.ends;
  // Request k+1 ends with call k's result.
  const starts = b.model
    .received()
    .filter((q) => JSON.stringify(q.body.messages).includes(tag))
    .slice(1)
    .map((q) => {
      const messages = q.body.messages as { role: string; content?: unknown }[];
      return stampMs(String(messages[messages.length - 1]?.content ?? ''));
    });
  const stamped = starts.filter((x): x is number => x !== undefined);
  const taskId = completedTaskId(r);
  const { scheduled, started } = taskId ? await activityTimes(b, taskId) : { scheduled: [], started: [] };
  if (!taskId || [ends, stamped, scheduled].some((x) => x.length !== COMPUTER_ROUNDS)) {
    const got = `${ends.length} tool-call messages, ${stamped.length} stamped results, ${scheduled.length} activities`;
    b.log(`computer ${tag}: HTTP ${r.status}, ${got} (want ${COMPUTER_ROUNDS} of each): ${r.body.slice(0, 200)}`);
    return undefined;
  }
  return { ends, scheduled, started, starts: stamped };
}

/** `n` spawns of `spawn`, one every `paceMs`: per spawn, the stamp at process start - the time just before it. */
async function paced(
  n: number,
  paceMs: number,
  spawn: () => Promise<string>,
): Promise<{ ms: number[]; errors: number }> {
  const out = { ms: [] as number[], errors: 0 };
  let next = epochNow();
  for (let i = 0; i < n; i++) {
    await sleep(next - epochNow());
    const t0 = epochNow();
    next = t0 + paceMs;
    const at = stampMs(await spawn().catch(() => ''));
    if (at === undefined) out.errors++;
    else out.ms.push(at - t0);
  }
  return out;
}

/** The bare bwrap command line: every namespace, the host's /usr (and its merged-usr links), /proc, /dev, /tmp, /workspace. */
function bareBwrapArgs(workspace: string): string[] {
  const root = readHostLayout().entries.filter((e) => !e.path.startsWith('/etc/'));
  return [
    '--unshare-all',
    '--die-with-parent',
    ...root.flatMap((e) => ('bind' in e ? ['--ro-bind', e.bind, e.path] : ['--symlink', e.symlink, e.path])),
    ...['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', workspace, '/workspace'],
    ...['--chdir', '/workspace', '--', ...COMMAND],
  ];
}

/** The median interval between consecutive process starts, ms. */
export const medianInterval = (starts: number[]) =>
  percentile(
    starts
      .slice(1)
      .map((at, k) => at - starts[k])
      .sort((a, c) => a - c),
    50,
  );

/** Runs of COMPUTER_ROUNDS calls, each followed by as many bare spawns of each kind and a floor run of as many rounds. */
async function computerSamples(b: Bench, sandbox: Sandbox, workspace: string): Promise<Samples> {
  const out: Samples = {
    service: [],
    toScheduled: [],
    fromScheduled: [],
    toStarted: [],
    fromStarted: [],
    paces: [],
    sandbox: [],
    bwrap: [],
    rounds: [],
    errors: { service: 0, sandbox: 0, bwrap: 0 },
  };
  const floor = await b.floor();
  const base = bashLimits(loadConfig(b.stack.env));
  const limits: SandboxLimits = { ...base, fileSizeBytes: base.workspaceMaxBytes };
  const inSandbox = async () =>
    (await sandbox.run({ argv: COMMAND, workspace, timeoutMs: 10_000, limits, keepBytes: 4096 })).stdout;
  const bwrapArgs = bareBwrapArgs(workspace);
  const bare = async () => (await execFileP('bwrap', bwrapArgs)).stdout;
  // Run -1 is an unmeasured warm-up of every path (the session's workspace, the sandbox's set-up, the floor worker).
  for (let i = -1; i < Math.ceil(b.opts.computerCalls / COMPUTER_ROUNDS) && b.left() > 0; i++) {
    const tag = `computerbench${String(i + 1).padStart(4, '0')}`;
    await b.quiet();
    const run = await serviceRun(b, tag);
    const pace = run ? medianInterval(run.starts) : 50;
    const s = await paced(COMPUTER_ROUNDS, pace, inSandbox);
    const w = await paced(COMPUTER_ROUNDS, pace, bare);
    await b.quiet();
    const f = await floor
      .rounds(tag, COMPUTER_ROUNDS)
      .catch((err: Error) => void b.log(`computer floor ${tag}: ${err.message}`));
    if (i < 0) continue;
    if (!run) out.errors.service += COMPUTER_ROUNDS;
    else
      run.ends.forEach((end, k) => {
        out.service.push(run.starts[k] - end);
        out.toScheduled.push(run.scheduled[k] - end);
        out.fromScheduled.push(run.starts[k] - run.scheduled[k]);
        // A started record not found (none expected) leaves the split short, not wrong.
        if (Number.isFinite(run.started[k])) {
          out.toStarted.push(run.started[k] - run.scheduled[k]);
          out.fromStarted.push(run.starts[k] - run.started[k]);
        }
      });
    out.paces.push(pace);
    out.sandbox.push(...s.ms);
    out.bwrap.push(...w.ms);
    out.rounds.push(...(f ?? []));
    out.errors.sandbox += s.errors;
    out.errors.bwrap += w.errors;
  }
  return out;
}

export async function computerPhase(b: Bench): Promise<Row[]> {
  const sandbox = createLocalSandbox();
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-bench-computer-'));
  const skew = () => (Date.now() - epochNow()).toFixed(1);
  const skewBefore = skew();
  // Logged with the row: before the spawner, each command forked the worker, whose size then set a spawn's cost.
  const workerRss = fmtMiB(readMem(b.pids().worker).rssKiB);
  let s: Samples;
  // Read once before (which also restarts the loop's delay measure) and once after the samples.
  const pausesBefore = await workerPauses(b);
  try {
    s = await computerSamples(b, sandbox, workspace);
    b.log(`computer: ${pausesBetween(pausesBefore, await workerPauses(b))}`);
  } finally {
    await sandbox.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  const round = rowOf(ROUND_FLOOR_LABEL, '1', s.rounds);
  const spawn = rowOf(BARE_SANDBOX_LABEL, '1', s.sandbox, { errors: s.errors.sandbox });
  const calls = judgeAgainstFloor(
    rowOf(COMPUTER_LABEL, '1', s.service, { errors: s.errors.service }),
    sumFloor(spawn, round),
  );
  b.log(
    `computer: p50=${fmtMs(calls.s.p50)} p99=${fmtMs(calls.s.p99)} ms, bare sandbox p99=${fmtMs(spawn.s.p99)}, one round p99=${fmtMs(round.s.p99)} (n=${calls.s.count}/${spawn.s.count}/${round.s.count}); Date.now() - epochNow() ${skewBefore} ms before, ${skew()} after (ms resolution); bare spawns paced every ${s.paces.map((p) => p.toFixed(0)).join('/')} ms; worker RSS ${workerRss} at the start`,
  );
  return [
    calls,
    rowOf(
      "  of which: tool-call message -> runComputerTool scheduled (the engine's record, 1 ms steps)",
      '1',
      s.toScheduled,
    ),
    rowOf('  of which: runComputerTool scheduled -> process start', '1', s.fromScheduled),
    rowOf("    of which: scheduled -> started (the engine's record: handed to a worker's poll)", '1', s.toStarted),
    rowOf('    of which: started -> process start (the worker: the call record, the spawn)', '1', s.fromStarted),
    spawn,
    rowOf(BARE_BWRAP_LABEL, '1', s.bwrap, { errors: s.errors.bwrap }),
    round,
  ];
}
