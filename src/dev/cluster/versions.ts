// The cluster's Temporal Worker Deployment: which build new runs go to (its current version), and
// which runs are still pinned to a build (a build can be retired once none is).
import { spawnSync } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ROOT } from '../launcher/processes';

/** This checkout's build id: its commit, short (`dev` outside a git checkout). */
export function checkoutBuildId(root = ROOT): string {
  const r = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : 'dev';
}

/** A connection to the cluster's Temporal for `fn`, closed after. */
export async function withConnection<T>(address: string, fn: (c: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address, connectTimeout: 5000 });
  try {
    return await fn(connection);
  } finally {
    await connection.close();
  }
}

/**
 * Makes `buildId` the deployment's current version: new runs (and auto-upgrading ones at their
 * next task) go to its workers. The server knows a version once one of its workers has polled, so
 * this asks again (every half second, up to `timeoutMs`) while it answers that it does not yet.
 */
export async function setCurrentVersion(
  address: string,
  namespace: string,
  deploymentName: string,
  buildId: string,
  timeoutMs = 60_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  await withConnection(address, async (c) => {
    for (;;) {
      try {
        await c.workflowService.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName,
          buildId,
          identity: 'scripts/cluster.sh',
        });
        return;
      } catch (err) {
        if (Date.now() > end)
          throw new Error(`${deploymentName} ${buildId} could not be made current: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  });
}

/** The deployment's current build, as the server has it (undefined before any). */
export async function currentBuildId(
  address: string,
  namespace: string,
  deploymentName: string,
): Promise<string | undefined> {
  return withConnection(address, async (c) => {
    const d = await c.workflowService.describeWorkerDeployment({ namespace, deploymentName });
    return d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
  });
}

/**
 * How many open runs are pinned to `buildId` of the deployment: while any is, that build's workers
 * must stay. One count query on the search attributes the server keeps for versioned runs (the
 * version is `<deployment>:<build>`; the behavior `Pinned`), as docs/operations.md gives it.
 */
export async function runsPinnedTo(
  address: string,
  namespace: string,
  deploymentName: string,
  buildId: string,
): Promise<number> {
  const query = [
    `TemporalWorkerDeploymentVersion = '${deploymentName}:${buildId}'`,
    `TemporalWorkflowVersioningBehavior = 'Pinned'`,
    `ExecutionStatus = 'Running'`,
  ].join(' AND ');
  return withConnection(address, async (c) =>
    Number((await c.workflowService.countWorkflowExecutions({ namespace, query })).count ?? 0),
  );
}

/** Whether the process `pid` of this machine polls the task queue for workflow tasks (a worker's readiness, as the server sees it). */
export async function pollsTaskQueue(
  address: string,
  namespace: string,
  taskQueue: string,
  pid: number,
): Promise<boolean> {
  return withConnection(address, async (c) => {
    const d = await c.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return (d.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`));
  });
}
