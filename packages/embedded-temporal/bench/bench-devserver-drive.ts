// Driving workflows through one case's server: a session (server, SDK client and worker)
// and the loop that keeps N workflows in flight and times each one.
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Options } from './bench-devserver-options';
import { ServerProcess, type ServerSpec } from './bench-devserver-server';
import type { BenchActivities } from './bench-devserver-workflows';

/** A case with this many failed workflows is abandoned: the numbers would mean nothing. */
const MAX_ERRORS = 20;

export interface BenchContext {
  opts: Options;
  tmpDir: string;
  /** How to launch each engine the run measures (the flatness run uses the embedded one). */
  servers: { embedded: ServerSpec; 'temporal-cli'?: ServerSpec };
  bundle: WorkflowBundleWithSourceMap;
  softDeadline: number;
}

const activities: BenchActivities = {
  async benchEcho(n: number): Promise<number> {
    return n;
  },
};

interface Session {
  server: ServerProcess;
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  worker: Worker;
  workerRun: Promise<void>;
  taskQueue: string;
}

export async function openSession(ctx: BenchContext, spec: ServerSpec, dbFile: string | undefined): Promise<Session> {
  const server = await ServerProcess.start(spec, dbFile);
  try {
    const connection = await Connection.connect({ address: server.address });
    const nativeConnection = await NativeConnection.connect({
      address: server.address,
      grpcCompression: { codec: ctx.opts.workerCompression },
    });
    const taskQueue = `bench-${process.pid}-${Date.now()}`;
    const pollers = ctx.opts.workerPollers;
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle: ctx.bundle,
      activities,
      ...(pollers
        ? {
            workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: pollers },
            activityTaskPollerBehavior: { type: 'simple-maximum', maximum: pollers },
          }
        : {}),
    });
    const workerRun = worker.run();
    // A worker that dies mid-run would otherwise only show up as hung workflows.
    workerRun.catch((err: unknown) => console.error(`worker failed: ${String(err)}`));
    return {
      server,
      client: new Client({ connection, namespace: 'default' }),
      connection,
      nativeConnection,
      worker,
      workerRun,
      taskQueue,
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

export async function closeSession(s: Session): Promise<void> {
  // Worker first: its long polls would otherwise hold the server's graceful shutdown open.
  if (s.worker.getState() === 'RUNNING') s.worker.shutdown();
  await s.workerRun.catch(() => undefined);
  await s.nativeConnection.close().catch(() => undefined);
  await s.connection.close().catch(() => undefined);
  await s.server.stop();
}

export interface DriveResult {
  completed: number;
  errors: number;
  firstError?: string;
  seconds: number;
  latenciesMs: number[];
  cutShort: boolean;
}

/**
 * Runs `total` workflows with `concurrency` in flight; onCompleted sees the running
 * completion count (used for the memory checkpoints).
 */
export async function drive(
  s: Session,
  tag: string,
  total: number,
  concurrency: number,
  softDeadline: number,
  onCompleted?: (completed: number) => void,
): Promise<DriveResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  let cutShort = false;
  const started = performance.now();
  const loop = async (): Promise<void> => {
    while (next < total && errors < MAX_ERRORS) {
      if (Date.now() > softDeadline) {
        cutShort = true;
        return;
      }
      const i = next++;
      const t0 = performance.now();
      try {
        const result = await s.client.workflow.execute('benchOneActivity', {
          taskQueue: s.taskQueue,
          workflowId: `${tag}-${i}`,
          args: [i],
        });
        if (result !== i) throw new Error(`workflow ${i} returned ${String(result)}`);
        latenciesMs.push(performance.now() - t0);
        completed++;
        onCompleted?.(completed);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, loop));
  return { completed, errors, firstError, seconds: (performance.now() - started) / 1000, latenciesMs, cutShort };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
