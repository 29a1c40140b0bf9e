// Reads a turn's thread where it lives: the session's messages from the session
// workflow, the run's own from the run (queries, so nothing large is copied
// through activity inputs into history). Runs of a session never interleave,
// so the session's part cannot change under a run (a clear aside). A small run
// thread comes inline instead: a query cost the worker 5.6 ms and the engine
// 4.5 ms of CPU (against about 50 ms for a whole one-turn task), more than a
// few KB of history is worth.
import type { Client } from '@temporalio/client';
import type { RunMessage, ThreadMessage } from '../workflows/types';
import { sessionWorkflowId } from '../workflows/types';
import { messagesQuery, threadQuery } from '../workflows/definitions';

export interface ThreadRef {
  taskId: string;
  session: string;
  account: string;
  thread: { sessionMessages: number; runMessages: number };
  /** The run's thread itself, when the workflow found it small enough to pass (a first turn, mostly). */
  runThread?: RunMessage[];
  /** The workflow that holds the run's thread (a DAG step's); default the task's. */
  threadWorkflowId?: string;
}

export async function readThread(
  temporal: Client,
  ref: ThreadRef,
): Promise<{ session: ThreadMessage[]; run: RunMessage[] }> {
  const [session, run] = await Promise.all([readSession(temporal, ref), readRun(temporal, ref)]);
  return { session, run };
}

async function readSession(temporal: Client, ref: ThreadRef): Promise<ThreadMessage[]> {
  if (!ref.thread.sessionMessages) return [];
  const all = await temporal.workflow.getHandle(sessionWorkflowId(ref.account, ref.session)).query(messagesQuery);
  return all.slice(0, ref.thread.sessionMessages);
}

async function readRun(temporal: Client, ref: ThreadRef): Promise<RunMessage[]> {
  if (ref.runThread) return ref.runThread;
  const handle = temporal.workflow.getHandle(ref.threadWorkflowId ?? ref.taskId);
  const out: RunMessage[] = [];
  while (out.length < ref.thread.runMessages) {
    const page = await handle.query(threadQuery, out.length);
    if (!page.messages.length) break;
    out.push(...page.messages);
  }
  return out.slice(0, ref.thread.runMessages);
}
