// Update-with-start (ExecuteMultiOperation [start, update]) as the real history
// service decides it: an update that already completed on the current run is
// answered from history; a running run takes the update when the start is a
// retry of the one that created it, when it already has that update, or when
// the conflict policy is USE_EXISTING; otherwise the start runs under its
// policies and the update rides on the new run's first workflow task.
import type { Engine } from './engine';
import type { Execution } from './state';
import type { RunParams } from './create-run';
import { ConflictPolicy } from '../proto';
import { ABORTED_OPERATION, RpcError, multiOperationFailed, unavailable, workflowNotReady } from '../errors';
import { Policies, startWorkflow } from './start';
import { PendingUpdate, admitUpdate, completedUpdate, pendingUpdate } from './updates';

export interface UpdateWithStartOutcome {
  run: Execution;
  update: PendingUpdate;
  /** How the start was resolved: a new run, the running run reused, or the update found completed. */
  start: 'started' | 'reused' | 'completed';
}

export function updateWithStart(
  eng: Engine,
  p: RunParams,
  policies: Policies,
  updateRequest: any,
): UpdateWithStartOutcome {
  const updateId: string = updateRequest.meta.updateId;
  const current = eng.currentRun(p.namespace, p.workflowId);
  if (current) {
    const done = completedUpdate(current, updateId);
    if (done) return { run: current, update: done, start: 'completed' };
    if (eng.isOpen(current) && reusesRun(eng, current, p, policies, updateId)) {
      return { run: current, update: updateOnly(eng, current, updateRequest), start: 'reused' };
    }
  }
  const run = startOnly(eng, p, policies, current);
  return { run, update: admitUpdate(eng, run, updateRequest), start: 'started' };
}

function reusesRun(eng: Engine, run: Execution, p: RunParams, policies: Policies, updateId: string): boolean {
  return (
    run.startRequestId === p.requestId ||
    !!pendingUpdate(eng, run, updateId) ||
    policies.conflict === ConflictPolicy.USE_EXISTING
  );
}

/** Delivers the update to a running run; its refusal is the update operation's failure. */
function updateOnly(eng: Engine, run: Execution, updateRequest: any): PendingUpdate {
  try {
    if (run.wftAttempt >= 3)
      throw workflowNotReady('Unable to perform workflow execution update due to Workflow Task in failed state.');
    return admitUpdate(eng, run, updateRequest);
  } catch (err) {
    throw err instanceof RpcError ? multiOperationFailed([ABORTED_OPERATION, err]) : err;
  }
}

/** Starts the new run; a start that does not create one (refused, or a retry of a closed run's start) fails the start operation. */
function startOnly(eng: Engine, p: RunParams, policies: Policies, current: Execution | undefined): Execution {
  try {
    const { run } = startWorkflow(eng, p, policies);
    if (run === current) throw unavailable('Workflow was not started: StartDeduped');
    return run;
  } catch (err) {
    throw err instanceof RpcError ? multiOperationFailed([err, ABORTED_OPERATION]) : err;
  }
}
