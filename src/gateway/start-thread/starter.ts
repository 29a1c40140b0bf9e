// Starts workflows for the gateway's submit path. The threaded starter moves the
// start calls off the main thread, whose event loop also relays every token to
// the SSE clients: a start's gRPC work (a few ms of CPU in pieces) there made the
// tokens that arrived meanwhile wait (docs/performance.md, session 11). With no
// stream open there is nothing to make wait, and the gateway starts in process.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import type { Logger } from 'pino';
import { HelperThread } from '../../helper-thread';
import type { FromThread, StartError, StartRequest, StartThreadConfig, ToThread } from './protocol';

export type { StartRequest } from './protocol';

export interface WorkflowStarter {
  /** Resolves once Temporal accepted the start; rejects with the client's error (name, message, gRPC code). */
  start(req: StartRequest): Promise<void>;
  close(): Promise<void>;
}

/** Starts on the calling thread: the gateway with no stream open, tests, embedders. */
export function inProcessStarter(client: Client, connection: Connection): WorkflowStarter {
  return {
    start: async (req) => {
      await connection.withDeadline(Date.now() + req.deadlineMs, () => client.workflow.start(req.workflowType, req.options));
    },
    close: async () => undefined,
  };
}

/**
 * Starts on `threaded` while `relaying()` (the gateway has SSE streams open), else on
 * `inProcess`. The thread hop costs each submit about half a millisecond at p50 and
 * a millisecond of gateway CPU (paced background submits, docs/performance.md):
 * worth paying only while tokens would otherwise wait behind the start.
 */
export function relayAwareStarter(inProcess: WorkflowStarter, threaded: WorkflowStarter, relaying: () => boolean): WorkflowStarter {
  return {
    start: (req) => (relaying() ? threaded : inProcess).start(req),
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
  resolve: () => void;
  reject: (e: Error) => void;
}

export class ThreadedStarter extends HelperThread<Pending, Extract<FromThread, { type: 'ready' }>> implements WorkflowStarter {
  constructor(opts: ThreadedStarterOptions) {
    super({
      entry: opts.entry ?? path.join(__dirname, 'thread-main.ts'),
      workerData: opts.config,
      logger: opts.logger,
      name: 'start thread',
      // Whether Temporal got a start in flight is unknown: the client hears "unavailable, retry",
      // and a retry with the same Idempotency-Key finds the run if it did start.
      onLoss: 'its starts fail as unavailable and the next one starts a new thread',
      exitError: (code) => unavailable(`the gateway's start thread exited (code ${code})`),
    });
  }

  /** Starts the thread now (else the first start does); resolves once it takes calls. */
  async ready(): Promise<void> {
    await this.thread().ready;
  }

  start(req: StartRequest): Promise<void> {
    if (this.closed) return Promise.reject(unavailable('the gateway is stopping'));
    const { worker } = this.thread();
    const id = this.nextId();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, req } satisfies ToThread);
    });
  }

  close(): Promise<void> {
    return this.stop(unavailable('the gateway stopped its start thread'));
  }

  protected onMessage(msg: unknown): void {
    const m = msg as Exclude<FromThread, { type: 'ready' }>;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.type === 'started') p.resolve();
    else p.reject(new StartCallError(m.error));
  }
}

/** Mapped to 503 with Retry-After by the gateway (mapTemporalError reads the gRPC code). */
function unavailable(message: string): StartCallError {
  return new StartCallError({ name: 'ServiceError', message, code: GrpcStatus.UNAVAILABLE });
}
