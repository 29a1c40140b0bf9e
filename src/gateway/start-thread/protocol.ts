// Messages between the gateway's main thread and its start thread.
import type { DescribedRun } from '../../common/sessions/lazy-sessions';
import type { WorkflowStartOptions } from '@temporalio/client';
import type { SessionRef } from '../../common/sessions/session-signals';
import type { TraceCarrier, TracingConfig } from '../../common/telemetry/tracing';

/** What the start thread builds its Temporal client from (workerData). */
export interface StartThreadConfig {
  address: string;
  namespace: string;
  logLevel: string;
  logJson: boolean;
  /**
   * PAYLOAD_KEYS of the gateway's own client, so what the thread starts is
   * encrypted alike. Absent: no codec (tests against a plain engine).
   */
  payloadKeys?: string;
  /** The gateway's tracing settings: the thread traces its calls too (as `aes-gateway`), with a provider of its own. */
  tracing?: TracingConfig;
}

export interface StartRequest {
  workflowType: string;
  options: WorkflowStartOptions;
  /** The call's gRPC deadline, ms from when the thread makes it. */
  deadlineMs: number;
}

export interface DescribeRequest {
  workflowId: string;
  deadlineMs: number;
}

/** What the submit path reads of a described workflow (plain data: it crosses the thread boundary). */
export type Described = DescribedRun;

export interface EnqueueRequest {
  ref: SessionRef;
  taskId: string;
  deadlineMs: number;
}

/** A client error reduced to what the gateway's error mapping reads (name, message, gRPC code). */
export interface StartError {
  name: string;
  message: string;
  code?: number;
}

export type ToThread = (
  | { id: number; call: 'start'; req: StartRequest }
  | { id: number; call: 'describe'; req: DescribeRequest }
  | { id: number; call: 'enqueue'; req: EnqueueRequest }
  /** Exports the thread's buffered spans (the gateway stopping). */
  | { id: number; call: 'flush' }
) & {
  /** The caller's trace context (its request's span), so the call's spans and the workflow join that trace. */
  trace?: TraceCarrier;
};
export type FromThread =
  | { type: 'ready' }
  | { type: 'done'; id: number; value?: Described }
  | { type: 'failed'; id: number; error: StartError };
