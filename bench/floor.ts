// The floors the MCP and DAG targets are judged against: bare workflows
// (bench/floor-workflows.ts) on the stack's own engine, run by a real Temporal
// SDK worker in a process of its own (an entry point: this file), set up as the
// service's worker is (its config: namespace, gRPC compression, workflow cache,
// nice level), on a task queue of its own, with activities that return at once.
// The bench starts them with the same client and times them on the same clocks
// as the phases they are the floor of.
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import type { FloorActivities, Stamp } from './floor-workflows';
import { epochNow } from './measure';
import { announce, announced, spawnEntry, stopChild } from './stack';

export const FLOOR_TASK_QUEUE = 'bench-floor';
export const MCP_FLOOR_LABEL = 'floor: bare SDK workflow, a call = 2 activity hand-offs';
export const DAG_FLOOR_LABEL = "floor: bare child chain, child closed -> next child's activity";

// ---- samples ----------------------------------------------------------------------

/** Per tool call k: (tool k started - turn k returned) + (turn k+1 started - tool k returned). */
export function toolCallSamples(steps: Stamp[]): number[] {
  const out: number[] = [];
  for (let k = 0; 2 * k + 2 < steps.length; k++) {
    const [turn, tool, next] = [steps[2 * k], steps[2 * k + 1], steps[2 * k + 2]];
    out.push(tool[0] - turn[1] + (next[0] - tool[1]));
  }
  return out;
}

/** Per link after the first: its activity's start - the previous child's close. */
export function chainSamples(starts: number[], closes: number[]): number[] {
  return starts.slice(1).map((at, k) => at - closes[k]);
}

// ---- the bench's side -------------------------------------------------------------

export interface Floor {
  readonly child: ChildProcess;
  /** One floorToolCalls workflow of `calls` calls: a sample per call (ms). */
  toolCalls(tag: string, calls: number): Promise<number[]>;
  /** One floorChain workflow of `links` children: a sample per link after the first (ms). */
  chain(tag: string, links: number): Promise<number[]>;
  stop(): Promise<void>;
}

/** Starts the floor worker with the stack's environment (its engine, its worker settings). */
export async function startFloor(stackEnv: NodeJS.ProcessEnv): Promise<Floor> {
  const child = spawnEntry('floor.ts', [], stackEnv);
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
    stop: async () => {
      await connection.close().catch(() => undefined);
      await stopChild(child);
    },
  };
}

// ---- the worker process --------------------------------------------------------------

const activities: FloorActivities = {
  async floorStep(): Promise<Stamp> {
    const at = epochNow();
    return [at, epochNow()];
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
