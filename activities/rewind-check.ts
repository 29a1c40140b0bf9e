// Whether a model turn runs in a run Temporal reset (a rewind, or a reset from the Web UI) that
// the run has not taken in yet: its run id differs from the original one and from the last reset
// run it heard of. The turn then answers what the reset asked (src/common/tasks/rewind-spec.ts)
// instead of calling the model; the run takes it in (a new relay epoch, a message, its session's
// turn again) and asks for the turn again. Found by the activity, so the run reads it from its
// history on replay, as a result like any other.
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { RewindSeen } from '../workflows/types';
import { readRewind } from '../src/common/tasks/rewind-spec';

export async function rewindOf(
  temporal: Client,
  check: { originalRunId: string; handledRun?: string } | undefined,
): Promise<RewindSeen | undefined> {
  const run = Context.current().info.workflowExecution;
  if (!check || !run) return undefined;
  const { workflowId, runId } = run;
  if (runId === check.originalRunId || runId === check.handledRun) return undefined;
  return (await readRewind(temporal, workflowId, runId)) ?? { runId };
}
