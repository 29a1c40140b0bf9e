// The cost phase (issue 42): what one one-turn background task costs the machine, against the
// floor of the same work on the same engine. Ours: bursts of --cost-runs background tasks
// submitted through the gateway (--cost-clients at a time), each one model turn of the bench's
// scripted model; per burst the CPU each stack process spent per task, tasks per second, each
// process's peak resident memory during the burst and its memory once the burst is over and the
// stack has settled (the soak's line: bounded memory shows as a flat one). The floor: as many
// bare workflows, each one activity calling the same model (bench/floor-workflows.ts), started
// by a Temporal client in the bench process on the same engine, with the floor worker's and the
// engine's CPU. Before the bursts, the Temporal work one such task causes, read from histories:
// its own workflow, its session's, its account's slots'.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { slotsWorkflowId } from '../workflows/definitions';
import {
  anyTasks,
  closedLoop,
  countTasks,
  processBusyS,
  readMem,
  request,
  sleep,
  target,
  type HttpTarget,
} from './measure';
import type { Row } from './report';
import type { Bench } from './stack';

type Event = temporal.api.history.v1.IHistoryEvent;
type Counts = Record<string, number>;

/** The history events that are Temporal's work, counted by kind (a workflow task is scheduled, started, completed: one). */
export function workOf(events: Event[]): Counts {
  const c: Counts = {};
  const add = (k: string) => void (c[k] = (c[k] ?? 0) + 1);
  for (const e of events) {
    if (e.workflowTaskCompletedEventAttributes) add('workflow tasks');
    else if (e.activityTaskScheduledEventAttributes)
      add(`activity ${e.activityTaskScheduledEventAttributes.activityType?.name}`);
    else if (e.markerRecordedEventAttributes) add(`marker ${markerType(e)}`);
    else if (e.workflowExecutionSignaledEventAttributes)
      add(`signal in ${e.workflowExecutionSignaledEventAttributes.signalName}`);
    else if (e.signalExternalWorkflowExecutionInitiatedEventAttributes)
      add(`signal out ${e.signalExternalWorkflowExecutionInitiatedEventAttributes.signalName}`);
    else if (e.workflowExecutionUpdateAcceptedEventAttributes)
      add(`update ${e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name}`);
    else if (e.timerStartedEventAttributes) add('timer');
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) add('child workflow');
    else if (e.upsertWorkflowSearchAttributesEventAttributes) add('search attributes upsert');
    else if (e.workflowPropertiesModifiedEventAttributes) add('memo upsert');
    else if (e.workflowExecutionContinuedAsNewEventAttributes) add('continue-as-new');
  }
  c['events'] = events.length;
  return c;
}

/** Markers by what they record (a local activity's type is in its payload, which the codec encrypts). */
function markerType(e: Event): string {
  const name = e.markerRecordedEventAttributes?.markerName ?? '?';
  return name === 'core_local_activity' ? 'local activity' : name === 'core_patch' ? 'patch' : name;
}

const line = (c: Counts) =>
  Object.entries(c)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/**
 * One task's Temporal work, logged by workflow: its own, its (new) session's, the account slots'
 * share. The account's second task: the first one's run opened the slots workflow, as only the
 * first of an account does.
 */
async function logTemporalWork(b: Bench, t: HttpTarget): Promise<void> {
  const temporal = await b.temporal();
  const oneTask = async () => {
    const r = await request(t, 'POST', '/', { message: 'cost: one task', background: true });
    const task = JSON.parse(r.body) as { task_id: string; session: string };
    await temporal.workflow
      .getHandle(task.task_id)
      .result()
      .catch(() => undefined);
    await sleep(1000); // the session's and the slots' last events (the turn and the slot given back)
    return task;
  };
  await oneTask();
  const before = await temporal.workflow
    .getHandle(slotsWorkflowId('bench'))
    .describe()
    .catch(() => undefined);
  const { task_id: id, session } = await oneTask();
  const history = async (wid: string) => (await temporal.workflow.getHandle(wid).fetchHistory()).events ?? [];
  b.log(`cost: Temporal work of one one-turn background task, the account's second (${id}):`);
  b.log(`  agentTask: ${line(workOf(await history(id)))}`);
  // A run that names no session opens none (src/common/sessions/lazy-sessions.ts); a deployment from before did.
  const own = await history(`session:bench:${session}`).catch(() => undefined);
  b.log(`  agentSession (its own): ${own ? line(workOf(own)) : 'none (opened only if the session is used again)'}`);
  b.log(`  accountSlots (shared by the account): ${await slotsShare(temporal, before)}`);
}

/** The slots workflow's events since `before` (the whole of it when this task started it). */
async function slotsShare(temporal: Client, before: WorkflowExecutionDescription | undefined): Promise<string> {
  const handle = temporal.workflow.getHandle(slotsWorkflowId('bench'), before?.runId);
  const events = (await handle.fetchHistory()).events ?? [];
  return line(workOf(events.slice(before?.historyLength ?? 0)));
}

interface Burst {
  seconds: number;
  /** Tasks of the burst that failed. */
  failed: number;
  cpuMsPerTask: Record<string, number>;
  peakMiB: Record<string, number>;
  afterMiB: Record<string, number>;
  heapMiB: Record<string, number>;
}

const rssMiB = (pid: number | undefined) => (readMem(pid).rssKiB ?? 0) / 1024;

/** The V8 heap in use of the gateway and the worker (their metrics, through the gateway's /metrics), MiB. */
async function heapUsedMiB(b: Bench): Promise<Record<string, number>> {
  const res = await fetch(`${b.gatewayUrl}/metrics`).catch(() => undefined);
  const out: Record<string, number> = {};
  for (const l of res?.ok ? (await res.text()).split('\n') : []) {
    const m = /^nodejs_heap_size_used_bytes\{[^}]*process="(\w+)"[^}]*\} ([\d.e+]+)$/.exec(l);
    if (m) out[m[1]] = Number(m[2]) / 2 ** 20;
  }
  return out;
}

/** Polls until nothing of the bench's account is queued, running or waiting. */
async function allEnded(t: HttpTarget): Promise<void> {
  while (await anyTasks(t, 'queued', 'running', 'input_required')) await sleep(250);
}

/** Measures `work` on `pids`: CPU ms per run, peak RSS sampled every 200 ms, seconds. */
async function measured(pids: Record<string, number | undefined>, runs: number, work: () => Promise<void>) {
  const live = Object.entries(pids).filter((e): e is [string, number] => e[1] !== undefined);
  const cpu0 = Object.fromEntries(live.map(([k, p]) => [k, processBusyS(p)]));
  const peakMiB: Record<string, number> = {};
  const sample = () => live.forEach(([k, p]) => (peakMiB[k] = Math.max(peakMiB[k] ?? 0, rssMiB(p))));
  const sampler = setInterval(sample, 200);
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  sample();
  const seconds = (performance.now() - t0) / 1000;
  const cpuMsPerTask = Object.fromEntries(live.map(([k, p]) => [k, ((processBusyS(p) - cpu0[k]) * 1000) / runs]));
  return { seconds, cpuMsPerTask, peakMiB };
}

async function ourBurst(b: Bench, t: HttpTarget, n: number): Promise<Burst> {
  const runs = b.opts.costRuns;
  const failedBefore = await countTasks(t, 'failed');
  // The ends are seen on the relay (the bench's Redis subscription), not by polling the task list:
  // each poll was a visibility query the gateway and the engine answered, counted as the tasks' cost.
  await b.watcher.resume();
  const m = await measured(b.pids(), runs, async () => {
    const ids: string[] = [];
    await closedLoop(runs, b.opts.costClients, async (k) => {
      const r = await request(t, 'POST', '/', { message: `cost ${n}-${k}`, background: true });
      if (r.status !== 202) throw new Error(`POST / answered ${r.status}: ${r.body}`);
      ids.push((JSON.parse(r.body) as { task_id: string }).task_id);
    });
    const missing = await b.watcher.waitAll(ids, 120_000);
    if (missing.length) b.log(`cost: burst ${n}: ${missing.length} tasks not seen ending on the relay; asking the API`);
    if (missing.length) await allEnded(t);
  }).finally(() => b.watcher.pause());
  await b.quiet('the stack after a burst');
  const afterMiB = Object.fromEntries(Object.entries(b.pids()).map(([k, p]) => [k, rssMiB(p)]));
  return { ...m, failed: (await countTasks(t, 'failed')) - failedBefore, afterMiB, heapMiB: await heapUsedMiB(b) };
}

const fmt = (r: Record<string, number>, digits = 1) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v.toFixed(digits)}`)
    .join(', ');
const total = (r: Record<string, number>) => Object.values(r).reduce((s, v) => s + v, 0);

/**
 * A floor burst right after each of ours, on the same machine in the same minute: the two cores'
 * speed swings by a fifth between runs (the floor alone read 7.8 to 11.8 ms per run in one hour),
 * and a burst judged against a floor measured at another time carries that swing. The floor's
 * worker is cold in its first burst as the stack is in its own first.
 */
async function floorBurst(b: Bench, n: number): Promise<number> {
  const floor = await b.floor();
  await b.quiet('the stack before the floor');
  const f = await measured({ 'floor worker': floor.child.pid, engine: b.pids().engine }, b.opts.costRuns, () =>
    floor.modelTurns(`cost-${process.pid}-${n}`, b.opts.costRuns, b.model.url, b.opts.costClients),
  );
  b.log(
    `cost: floor ${n}: ${b.opts.costRuns} bare one-activity workflows calling the same model in ${f.seconds.toFixed(1)} s = ${(b.opts.costRuns / f.seconds).toFixed(1)} runs/s; CPU ms per run ${fmt(f.cpuMsPerTask)} (all ${total(f.cpuMsPerTask).toFixed(1)})`,
  );
  return total(f.cpuMsPerTask);
}

/** Each burst's CPU per task over its floor burst's; the verdict reads the warm pairs (the second on). */
function logRatios(b: Bench, ours: number[], floors: number[]): void {
  const ratios = ours.map((o, k) => o / floors[k]);
  const warm = ratios.length > 1 ? ratios.slice(1) : ratios;
  const median = [...warm].sort((x, y) => x - y)[Math.floor((warm.length - 1) / 2)];
  b.log(
    `cost: CPU per task over the floor's, each burst against the floor burst after it: ${ratios.map((r) => r.toFixed(2)).join(', ')}; ` +
      `warm bursts (the second on): median ${median.toFixed(2)}, best ${Math.min(...warm).toFixed(2)} (target <= 2.0)`,
  );
}

export async function costPhase(b: Bench): Promise<Row[]> {
  const t = target(b.gatewayUrl, b.apiKey, b.opts.costClients);
  try {
    await b.quiet();
    await logTemporalWork(b, t);
    const before = Object.fromEntries(Object.entries(b.pids()).map(([k, p]) => [k, rssMiB(p)]));
    b.log(`cost: memory before the bursts, MiB: ${fmt(before, 0)}`);
    const bursts: Burst[] = [];
    const floors: number[] = [];
    for (let n = 1; n <= b.opts.costBursts && b.left() > 60_000; n++) {
      await b.quiet();
      const x = await ourBurst(b, t, n);
      bursts.push(x);
      b.log(
        `cost: burst ${n}: ${b.opts.costRuns} one-turn background tasks (${x.failed} failed) in ${x.seconds.toFixed(1)} s = ${(b.opts.costRuns / x.seconds).toFixed(1)} tasks/s; ` +
          `CPU ms per task ${fmt(x.cpuMsPerTask)} (all ${total(x.cpuMsPerTask).toFixed(1)}); peak MiB ${fmt(x.peakMiB, 0)}; after MiB ${fmt(x.afterMiB, 0)} (V8 heap in use ${fmt(x.heapMiB, 0)})`,
      );
      floors.push(await floorBurst(b, n));
    }
    if (b.opts.costSettleS > 0) {
      // Sessions close after their idle time, and the worker's cache lets go of closed runs.
      await sleep(b.opts.costSettleS * 1000);
      const settled = Object.fromEntries(Object.entries(b.pids()).map(([k, p]) => [k, rssMiB(p)]));
      b.log(
        `cost: memory ${b.opts.costSettleS} s after the last burst, MiB: ${fmt(settled, 0)} (V8 heap in use ${fmt(await heapUsedMiB(b), 0)})`,
      );
    }
    // A task of a burst that failed is a bug, not a cost: the run fails.
    if (bursts.some((x) => x.failed > 0)) process.exitCode = 1;
    logRatios(
      b,
      bursts.map((x) => total(x.cpuMsPerTask)),
      floors,
    );
  } finally {
    t.agent.destroy();
  }
  return [];
}
