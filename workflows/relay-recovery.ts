// A run (or a DAG step) whose events the relay failed to take publishes them
// again from its own record before it ends (activities/relay.ts recoverEvents:
// it compares the task's stream with the record and publishes what is
// missing, marked `recovered`). A local activity: nothing of the record goes
// into history. A relay still down is waited for, briefly for a task (its end
// did not reach the relay either, and the gateway, publishing that end once
// Redis is back, recovers the rest from the task's result: src/gateway/services/run-end.ts),
// about half a minute for a DAG step (its own events are in no other record).
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RecoverEventsInput } from '../activities/relay';

const BRIEF = { maximumAttempts: 2, initialInterval: '300ms' } as const;
const PATIENT = {
  maximumAttempts: 8,
  initialInterval: '500ms',
  backoffCoefficient: 2,
  maximumInterval: '10s',
} as const;

const brief = proxyLocalActivities<Activities>({ startToCloseTimeout: '30s', retry: BRIEF });
const patient = proxyLocalActivities<Activities>({ startToCloseTimeout: '30s', retry: PATIENT });

/** Publishes what the relay lacks of `record`; returns the highest seq heard of. `patient`: no other record holds these events. */
export async function recoverLostEvents(
  input: Omit<RecoverEventsInput, 'attempts'>,
  opts: { patient?: boolean } = {},
): Promise<number> {
  const policy = opts.patient ? PATIENT : BRIEF;
  const r = await (opts.patient ? patient : brief).recoverEvents({ ...input, attempts: policy.maximumAttempts });
  return Math.max(input.floor, r.lastSeq);
}
