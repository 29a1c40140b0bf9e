// The worker's Temporal Worker Deployment version (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID), for
// both of its Worker instances: absent, the worker is unversioned. Each workflow type declares
// its own behavior (workflows/versioning.ts); PINNED is the default for a type that would not.
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { ConfigError, type Config } from '../common/config';
import { versioningIssues } from '../common/versioning-config';

export function deploymentOptions(config: Pick<Config, 'WORKER_DEPLOYMENT_NAME' | 'WORKER_BUILD_ID'>): {
  workerDeploymentOptions?: WorkerDeploymentOptions;
} {
  const issues = versioningIssues(config);
  if (issues.length) throw new ConfigError(issues);
  if (!config.WORKER_DEPLOYMENT_NAME || !config.WORKER_BUILD_ID) return {};
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: config.WORKER_DEPLOYMENT_NAME, buildId: config.WORKER_BUILD_ID },
      defaultVersioningBehavior: 'PINNED',
    },
  };
}
