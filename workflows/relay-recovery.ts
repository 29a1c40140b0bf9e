// A run (or a DAG step) whose events the relay failed to take publishes them
// again from its own record before it ends (activities/relay.ts recoverEvents:
// it compares the task's stream with the record and publishes what is
// missing, marked `recovered`). A local activity: nothing of the record goes
// into history. A relay still down is waited for, about half a minute in all,
// then the run ends without it.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RecoverEventsInput } from '../activities/relay';

const RECOVERY_ATTEMPTS = 8;

const recovery = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: RECOVERY_ATTEMPTS, initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** Publishes what the relay lacks of `record`; returns the highest seq heard of. */
export async function recoverLostEvents(input: Omit<RecoverEventsInput, 'attempts'>): Promise<number> {
  const r = await recovery.recoverEvents({ ...input, attempts: RECOVERY_ATTEMPTS });
  return Math.max(input.floor, r.lastSeq);
}
