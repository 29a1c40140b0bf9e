// The submit path's Temporal calls, one implementation for both places they
// run: in process (no stream open) and on the start thread. Each call carries
// its own gRPC deadline; results cross the thread boundary, so they are plain
// data (dates as ISO strings).
import { type Client, type Connection, WorkflowNotFoundError } from '@temporalio/client';
import { describeWith } from '../../common/sessions/lazy-sessions';
import { signalSession } from '../../common/sessions/session-signals';
import type { Described, DescribeRequest, EnqueueRequest, StartRequest } from './protocol';
import { enqueueSignal } from '../../../workflows/definitions';

export interface SubmitCalls {
  /** Resolves once Temporal accepted the start; rejects with the client's error (name, message, gRPC code). */
  start(req: StartRequest): Promise<void>;
  /** The workflow's memo and start time; rejects with WorkflowNotFoundError when there is none. */
  describe(req: DescribeRequest): Promise<Described>;
  /** Puts a run in its session's turn order, reopening the session when it closed (signalSession). */
  enqueue(req: EnqueueRequest): Promise<void>;
}

export function submitCalls(client: Client, connection: Connection): SubmitCalls {
  const within = <T>(ms: number, fn: () => Promise<T>) => connection.withDeadline(Date.now() + ms, fn);
  const describe = describeWith(client);
  return {
    start: async (req) => {
      await within(req.deadlineMs, () => client.workflow.start(req.workflowType, req.options));
    },
    describe: async (req) => {
      const d = await within(req.deadlineMs, () => describe(req.workflowId));
      if (!d)
        throw new WorkflowNotFoundError(`workflow not found for ID: ${req.workflowId}`, req.workflowId, undefined);
      return d;
    },
    enqueue: (req) =>
      within(req.deadlineMs, () =>
        signalSession(client, req.ref, enqueueSignal, [{ taskId: req.taskId }], { caller: req.taskId }),
      ),
  };
}
