// The run's relay writes as local activities (a run's end, a gated call's request and decision, a
// DAG's step reports): a few Redis writes that must not wait in the task queue behind other runs'
// model turns (a bench load of 1,000 tasks took four times as long), each leaving one marker in
// history instead of three events. One set of options for all of them.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export const localRelay = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '200ms' },
});
