// The gateway's submit path makes its Temporal calls through here: a run's
// start, a new session's start, and a continuation's session check and
// enqueue. The threaded version moves them off the main thread, whose event
// loop also relays every token to the SSE clients: a start's gRPC work (a few
// ms of CPU in pieces) there made the tokens that arrived meanwhile wait
// (docs/performance.md, "The gateway's start thread"). With no stream open there is nothing to
// make wait, and the gateway makes them in process.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import type { Logger } from 'pino';
import { HelperThread } from '../../common/helper-thread';
import { submitCalls, SubmitCalls } from './calls';
import type {
  Described,
  DescribeRequest,
  EnqueueRequest,
  FromThread,
  StartError,
  StartRequest,
  StartThreadConfig,
  ToThread,
} from './protocol';
import { traceCarrier } from '../../common/telemetry/tracing';

export type { Described, DescribeRequest, EnqueueRequest, StartRequest } from './protocol';

export interface WorkflowStarter extends SubmitCalls {
  close(): Promise<void>;
}

/** Calls on the calling thread: the gateway with no stream open, tests, embedders. */
export function inProcessStarter(client: Client, connection: Connection): WorkflowStarter {
  return { ...submitCalls(client, connection), close: async () => undefined };
}

/**
 * Calls on `threaded` while `relaying()` (the gateway has SSE streams open), else on
 * `inProcess`. The thread hop costs each submit about half a millisecond at p50 and
 * a millisecond of gateway CPU (paced background submits, docs/performance.md):
 * worth paying only while tokens would otherwise wait behind the calls.
 */
export function relayAwareStarter(
  inProcess: WorkflowStarter,
  threaded: WorkflowStarter,
  relaying: () => boolean,
): WorkflowStarter {
  const pick = () => (relaying() ? threaded : inProcess);
  return {
    start: (req) => pick().start(req),
    describe: (req) => pick().describe(req),
    enqueue: (req) => pick().enqueue(req),
    close: async () => {
      await Promise.all([inProcess.close(), threaded.close()]);
    },
  };
}

/** An error the start thread reported: the client's name (e.g. WorkflowExecutionAlreadyStartedError), message and gRPC code. */
export class StartCallError extends Error {
  readonly code?: number;
  constructor(e: StartError) {
    super(e.message);
    this.name = e.name;
    if (e.code !== undefined) this.code = e.code;
  }
}

export interface ThreadedStarterOptions {
  config: StartThreadConfig;
  logger: Logger;
  /** Thread entry point. Default: thread-main.ts beside this file (tests point elsewhere). */
  entry?: string;
}

interface Pending {
  resolve: (value?: Described) => void;
  reject: (e: Error) => void;
}

/** A call as posted, without its id. */
type Call = ToThread extends infer T ? (T extends unknown ? Omit<T, 'id'> : never) : never;

export class ThreadedStarter
  extends HelperThread<Pending, Extract<FromThread, { type: 'ready' }>>
  implements WorkflowStarter
{
  constructor(private readonly opts: ThreadedStarterOptions) {
    super({
      entry: opts.entry ?? path.join(__dirname, 'thread-main.ts'),
      workerData: opts.config,
      logger: opts.logger,
      name: 'start thread',
      // Whether Temporal got a call in flight is unknown: the client hears "unavailable, retry",
      // and a retry with the same Idempotency-Key finds the run if it did start.
      onLoss: 'its calls fail as unavailable and the next one starts a new thread',
      exitError: (code) => unavailable(`the gateway's start thread exited (code ${code})`),
    });
  }

  /** Starts the thread now (else the first call does); resolves once it takes calls. */
  async ready(): Promise<void> {
    await this.thread().ready;
  }

  async start(req: StartRequest): Promise<void> {
    await this.call({ call: 'start', req });
  }

  async describe(req: DescribeRequest): Promise<Described> {
    return (await this.call({ call: 'describe', req }))!;
  }

  async enqueue(req: EnqueueRequest): Promise<void> {
    await this.call({ call: 'enqueue', req });
  }

  async close(): Promise<void> {
    // A tracing thread exports its last spans first (a stop terminates it, buffers and all), within 2 s.
    if (this.opts.config.tracing?.OTEL_EXPORTER_OTLP_ENDPOINT && this.running && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)));
      await Promise.race([this.call({ call: 'flush' }).catch(() => undefined), deadline]);
      clearTimeout(timer);
    }
    return this.stop(unavailable('the gateway stopped its start thread'));
  }

  private call(c: Call): Promise<Described | undefined> {
    if (this.closed) return Promise.reject(unavailable('the gateway is stopping'));
    const { worker } = this.thread();
    const id = this.nextId();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // The caller's span (its request's), so what the thread starts joins the trace.
      worker.postMessage({ id, ...c, trace: traceCarrier() } as ToThread);
    });
  }

  protected onMessage(msg: unknown): void {
    const m = msg as Exclude<FromThread, { type: 'ready' }>;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.type === 'done') p.resolve(m.value);
    else p.reject(new StartCallError(m.error));
  }
}

/** Mapped to 503 with Retry-After by the gateway (mapTemporalError reads the gRPC code). */
function unavailable(message: string): StartCallError {
  return new StartCallError({ name: 'ServiceError', message, code: GrpcStatus.UNAVAILABLE });
}
