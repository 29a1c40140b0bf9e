// Messages between the gateway's main thread and its start thread.
import type { WorkflowStartOptions } from '@temporalio/client';

/** What the start thread builds its Temporal client from (workerData). */
export interface StartThreadConfig {
  address: string;
  namespace: string;
  logLevel: string;
  logJson: boolean;
}

export interface StartRequest {
  workflowType: string;
  options: WorkflowStartOptions;
  /** The call's gRPC deadline, ms from when the thread makes it. */
  deadlineMs: number;
}

/** A client error reduced to what the gateway's error mapping reads (name, message, gRPC code). */
export interface StartError {
  name: string;
  message: string;
  code?: number;
}

export type ToThread = { id: number; req: StartRequest };
export type FromThread = { type: 'ready' } | { type: 'started'; id: number } | { type: 'failed'; id: number; error: StartError };
