// Workflow for bench-devserver.ts: one trivial activity per workflow, so
// the bench measures the server's per-workflow overhead (start, two workflow
// tasks, one activity task, completion), not workflow code.
import { proxyActivities } from '@temporalio/workflow';

/** Declared here rather than imported so the workflow bundle pulls in nothing but the SDK. */
export interface BenchActivities {
  benchEcho(n: number): Promise<number>;
}

const acts = proxyActivities<BenchActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 } });

export async function benchOneActivity(n: number): Promise<number> {
  return await acts.benchEcho(n);
}
