// Workflows of namespaces.engine.test.ts. Deterministic code only.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities/namespaces';

const acts = proxyActivities<typeof activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } });

/** Reports the namespace it ran in, as seen by the workflow and by its activity. */
export async function whereAmI(): Promise<string> {
  return `${workflowInfo().namespace}/${await acts.activityNamespace()}`;
}
