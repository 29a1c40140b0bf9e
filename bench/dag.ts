// The DAG phase, and the floors the MCP, DAG and computer targets are judged against.
//
// DAG: how long a declarative workflow's step waits to start once its last
// dependency has finished. Each run is the 20-step DAG of
// test/e2e/workflows.e2e.test.ts (fan-out, diamond, fan-in; one model turn a
// step), each step answering a short fixed text: with the scripted model's echo
// the answers grew along the DAG (a step's prompt holds its dependencies'
// answers: e1's reached about 24 KB, streamed word by word), and the streaming
// of siblings, not the scheduling, filled the row. Per step with dependencies:
//   sample = the step's first model request (received().at, this process)
//          - the latest close among its dependencies' step workflows (describe: the engine's record).
// After each run, a floor run: a bare chain of as many child workflows as the
// DAG has dependent steps, timed the same way (child closed, describe -> the
// next child's first activity started); the row is judged against it:
// p99 <= FLOOR_RATIO x the floor's.
//
// Floors: bare workflows (bench/floor-workflows.ts) on the stack's own engine,
// run by a real Temporal SDK worker in a process of its own (an entry point:
// this file), set up as the service's worker is (its config: namespace, gRPC
// compression, workflow cache, nice level), on a task queue of its own, with
// activities that return at once. The bench starts them with the same client
// and times them on the same clocks as the phases they are the floor of.
import type { ChildProcess } from 'node:child_process';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { FloorActivities, Stamp } from './floor-workflows';
import { closedLoop, completedTaskId, epochNow } from './measure';
import { judgeAgainstFloor, Row, rowOf } from './report';
import { announce, announced, spawnEntry, stopChild } from './servers';
import type { Bench } from './stack';

export const DAG_LABEL = "DAG step scheduling: last dependency closed -> the step's first model request";
export const FLOOR_TASK_QUEUE = 'bench-floor';
export const MCP_FLOOR_LABEL = 'floor: bare SDK workflow, a call = 2 activity hand-offs';
export const DAG_FLOOR_LABEL = "floor: bare child chain, child closed -> next child's activity";

const STEPS: [string, string[]][] = [
  ['r1', []],
  ['r2', []],
  ['r3', []],
  ['a1', ['r1']],
  ['a2', ['r1']],
  ['a3', ['r1']],
  ['a4', ['r1']],
  ['b1', ['r2']],
  ['b2', ['b1']],
  ['b3', ['b1']],
  ['b4', ['b2', 'b3']],
  ['c1', ['a1', 'a2', 'a3', 'a4', 'b4', 'r3']],
  ['d1', ['c1']],
  ['d2', ['c1']],
  ['d3', ['c1']],
  ['d4', ['c1']],
  ['d5', ['c1']],
  ['e1', ['d1', 'd2', 'd3', 'd4', 'd5']],
  ['f1', ['r3']],
  ['f2', ['f1']],
];
/** Steps with dependencies: samples a run gives, and the floor chain's links after its first. */
const DEPENDENT = STEPS.filter(([, deps]) => deps.length).length;

interface DagRun {
  /** Per dependent step: its wait, and whether its last dependency started other steps with it (a fan-out). */
  samples: { ms: number; fanOut: boolean }[];
  /** Dependent steps that had no model request. */
  missing: number;
}

/** The first model request of each step of the run tagged `tag`, by step name. */
function firstRequests(b: Bench, tag: string): Map<string, number> {
  const first = new Map<string, number>();
  for (const q of b.model.received()) {
    const prompt = String(
      (q.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')?.content ?? '',
    );
    const name = /^The step: (\S+)\./m.exec(prompt.split('\n')[1] ?? '')?.[1];
    if (name?.startsWith(`${tag}-`) && !first.has(name)) first.set(name, q.at);
  }
  return first;
}

/** One DAG through the service; undefined when the task did not complete. */
async function dagRun(b: Bench, tag: string): Promise<DagRun | undefined> {
  const steps = STEPS.map(([id, deps]) => ({
    id,
    name: `${tag}-${id}`,
    description: `[[say text="${id} done"]]`,
    depends_on: deps,
  }));
  const body = { message: `plan ${tag}`, workflows: [{ id: 'w', name: tag, description: 'bench', steps }] };
  const taskId = completedTaskId(await b.post(body, 120_000));
  if (!taskId) return undefined;
  const first = firstRequests(b, tag);
  const temporal = await b.temporal();
  const closed = new Map<string, number>();
  await Promise.all(
    steps.map(async (s) =>
      closed.set(s.id, (await temporal.workflow.getHandle(`${taskId}:w:${s.id}`).describe()).closeTime!.getTime()),
    ),
  );
  // The dependency that closed last started the step, in the dagWorkflow's task that learnt of its close.
  const trigger = (deps: string[]) => deps.reduce((a, d) => (closed.get(d)! > closed.get(a)! ? d : a));
  const dependent = steps.filter((x) => x.depends_on.length);
  const triggered = dependent.map((x) => trigger(x.depends_on));
  const out: DagRun = { samples: [], missing: 0 };
  dependent.forEach((s, i) => {
    const at = first.get(s.name);
    const fanOut = triggered.filter((t) => t === triggered[i]).length > 1;
    if (at === undefined) out.missing++;
    else out.samples.push({ ms: at - closed.get(triggered[i])!, fanOut });
  });
  return out;
}

export async function dagPhase(b: Bench): Promise<Row[]> {
  const floorWorker = await b.floor();
  const samples: DagRun['samples'] = [];
  const floor: number[] = [];
  let errors = 0;
  // Run 0 is an unmeasured warm-up of both.
  for (let i = 0; i <= b.opts.dagRuns && b.left() > 0; i++) {
    await b.quiet();
    const run = await dagRun(b, `dagbench${i}`);
    if (!run) errors++;
    else if (i > 0) {
      samples.push(...run.samples);
      errors += run.missing;
    }
    await b.quiet();
    const f = await floorWorker
      .chain(`dag${i}`, DEPENDENT + 1)
      .catch((err: Error) => void b.log(`dag floor ${i}: ${err.message}`));
    if (i > 0) floor.push(...(f ?? []));
  }
  b.log(
    `dag: ${samples.length} steps measured over ${b.opts.dagRuns} runs of ${STEPS.length} steps, ${errors} errors; floor: ${floor.length} links`,
  );
  const floorRow = rowOf(DAG_FLOOR_LABEL, '1 chain', floor);
  const of = (fanOut: boolean) => samples.filter((x) => x.fanOut === fanOut).map((x) => x.ms);
  return [
    judgeAgainstFloor(
      rowOf(
        DAG_LABEL,
        '1 DAG',
        samples.map((x) => x.ms),
        { errors },
      ),
      floorRow,
    ),
    rowOf('  of which: steps their last dependency started alone', '1 DAG', of(false)),
    rowOf('  of which: steps started with others (a fan-out of 2 to 5)', '1 DAG', of(true)),
    floorRow,
  ];
}

// ---- the floors' samples --------------------------------------------------------------

/** Per tool call k: (tool k started - turn k returned) + (turn k+1 started - tool k returned). */
export function toolCallSamples(steps: Stamp[]): number[] {
  const out: number[] = [];
  for (let k = 0; 2 * k + 2 < steps.length; k++) {
    const [turn, tool, next] = [steps[2 * k], steps[2 * k + 1], steps[2 * k + 2]];
    out.push(tool[0] - turn[1] + (next[0] - tool[1]));
  }
  return out;
}

/** Per activity after the first: its start - the previous one's return (one activity round: completed -> workflow task -> next started). */
export function roundSamples(steps: Stamp[]): number[] {
  return steps.slice(1).map((step, k) => step[0] - steps[k][1]);
}

/** Per link after the first: its activity's start - the previous child's close. */
export function chainSamples(starts: number[], closes: number[]): number[] {
  return starts.slice(1).map((at, k) => at - closes[k]);
}

// ---- the floors, from the bench's side ------------------------------------------------

export interface Floor {
  readonly child: ChildProcess;
  /** One floorToolCalls workflow of `calls` calls: a sample per call (ms). */
  toolCalls(tag: string, calls: number): Promise<number[]>;
  /** The floorToolCalls workflow of about `rounds` / 2 calls: a sample per activity round (ms). */
  rounds(tag: string, rounds: number): Promise<number[]>;
  /** One floorChain workflow of `links` children: a sample per link after the first (ms). */
  chain(tag: string, links: number): Promise<number[]>;
  /** `runs` floorModelTurn workflows started at once (`clients` starts in flight), all awaited. */
  modelTurns(tag: string, runs: number, modelUrl: string, clients: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the floor worker with the stack's environment (its engine, its worker settings). */
export async function startFloor(stackEnv: NodeJS.ProcessEnv): Promise<Floor> {
  const child = spawnEntry('dag.ts', [], stackEnv);
  try {
    await announced(child, 'ready');
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  const connection = await Connection.connect({ address: stackEnv.TEMPORAL_ADDRESS! });
  const client = new Client({ connection, namespace: stackEnv.TEMPORAL_NAMESPACE || 'default' });
  const opts = (id: string, args: [number]) => ({
    taskQueue: FLOOR_TASK_QUEUE,
    workflowId: `bench-floor-${process.pid}-${id}`,
    args,
    workflowExecutionTimeout: '2m' as const,
  });
  return {
    child,
    toolCalls: async (tag, calls) =>
      toolCallSamples(await client.workflow.execute('floorToolCalls', opts(tag, [calls]))),
    rounds: async (tag, rounds) =>
      roundSamples(await client.workflow.execute('floorToolCalls', opts(tag, [Math.ceil(rounds / 2)]))),
    chain: async (tag, links) => {
      const o = opts(tag, [links]);
      const starts = await client.workflow.execute<(n: number) => Promise<number[]>>('floorChain', o);
      const closes = await Promise.all(
        starts.map(async (_, k) =>
          (await client.workflow.getHandle(`${o.workflowId}-${k}`).describe()).closeTime!.getTime(),
        ),
      );
      return chainSamples(starts, closes);
    },
    modelTurns: async (tag, runs, modelUrl, clients) => {
      // Started as the service's background runs are submitted (`clients` at a time), then all awaited.
      const handles: WorkflowHandle[] = [];
      await closedLoop(runs, clients, async (k) => {
        const o = { ...opts(`${tag}-${k}`, [0]), args: [modelUrl, `floor ${tag} ${k}`] };
        handles.push(await client.workflow.start('floorModelTurn', o));
      });
      for (const out of await Promise.all(handles.map((h) => h.result() as Promise<string>))) {
        if (!out.startsWith('You said')) throw new Error(`a floor turn answered ${out}`);
      }
    },
    stop: async () => {
      await connection.close().catch(() => undefined);
      await stopChild(child);
    },
  };
}

// ---- the floors' worker process -------------------------------------------------------

const activities: FloorActivities = {
  async floorStep(): Promise<Stamp> {
    const at = epochNow();
    return [at, epochNow()];
  },
  async floorModelCall(baseUrl: string, message: string): Promise<string> {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench-scripted-model' },
      body: JSON.stringify({ model: 'scripted-base', messages: [{ role: 'user', content: message }] }),
    });
    if (!res.ok) throw new Error(`the model answered ${res.status}`);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    return body.choices[0].message.content;
  },
};

async function serve(): Promise<void> {
  // Here only (require, not import: the bench process must not load the worker's native runtime).
  const { NativeConnection, Worker } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const { loadConfig } = require('../src/common/config') as typeof import('../src/common/config');
  const { createLogger } = require('../src/common/logger') as typeof import('../src/common/logger');
  const { workflowBundle } = require('../src/worker/workflow-bundle') as typeof import('../src/worker/workflow-bundle');
  const { lowerPriorityExcept, scavengeWithoutHelpers } =
    require('../src/worker/thread-priority') as typeof import('../src/worker/thread-priority');
  const { installRuntimeLogger } = require('../src/common/temporal') as typeof import('../src/common/temporal');
  const config = loadConfig(process.env);
  if (config.WORKER_NICE > 0) scavengeWithoutHelpers();
  const logger = createLogger({ level: 'warn', name: 'bench-floor', destination: process.stderr });
  installRuntimeLogger(logger);
  const connection = await NativeConnection.connect({
    address: config.TEMPORAL_ADDRESS,
    grpcCompression: { codec: config.TEMPORAL_GRPC_COMPRESSION },
  });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: FLOOR_TASK_QUEUE,
    workflowBundle: await workflowBundle(
      { workflowsPath: require.resolve('./floor-workflows'), interceptorModules: [] },
      logger,
    ),
    activities,
    maxCachedWorkflows: config.WORKER_CACHED_WORKFLOWS,
    shutdownGraceTime: 0,
  });
  if (config.WORKER_NICE > 0) lowerPriorityExcept(config.WORKER_NICE, []);
  process.once('SIGTERM', () => worker.shutdown());
  announce({ ready: true });
  await worker.run();
  await connection.close();
}

if (require.main === module) {
  serve().catch((err) => {
    process.stderr.write(`bench floor worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
