// Worker versioning (docs/operations.md, "Upgrades without stopping agents"), part of the one
// configuration schema (config.ts spreads it into envSchema): which Temporal Worker Deployment a
// worker belongs to and which build of it it runs. Unset: an unversioned worker, as before.
import { z } from 'zod';

/** Temporal's limit for a deployment name or a build id; no `.` or `:`, which its version strings use as separators. */
const VERSION_PART = /^[A-Za-z0-9_-]{1,128}$/;

export const versioningVariables = {
  /**
   * The Temporal Worker Deployment the worker belongs to (e.g. `agent-service`): with it, the
   * worker is versioned (WORKER_BUILD_ID is then required), task runs are pinned to the build
   * that started them, and new runs go to the deployment's current version. Default: unset, an
   * unversioned worker.
   */
  WORKER_DEPLOYMENT_NAME: z.string().regex(VERSION_PART, '1-128 letters, digits, _ or -').optional(),
  /** The build this worker runs (a release's id, e.g. its git commit), with WORKER_DEPLOYMENT_NAME. */
  WORKER_BUILD_ID: z.string().regex(VERSION_PART, '1-128 letters, digits, _ or -').optional(),
};

/**
 * Both or neither, for a worker (a gateway ignores them, so one environment can serve both): a
 * deployment without a build id, or the reverse, is a mistake said at the worker's start.
 */
export function versioningIssues(env: {
  WORKER_DEPLOYMENT_NAME?: string;
  WORKER_BUILD_ID?: string;
}): { variable: string; message: string }[] {
  if (Boolean(env.WORKER_DEPLOYMENT_NAME) === Boolean(env.WORKER_BUILD_ID)) return [];
  const missing = env.WORKER_DEPLOYMENT_NAME ? 'WORKER_BUILD_ID' : 'WORKER_DEPLOYMENT_NAME';
  return [{ variable: missing, message: 'WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID go together' }];
}
