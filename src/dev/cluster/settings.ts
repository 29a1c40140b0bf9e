// The service's settings in the cluster on one machine: what every gateway and worker gets, as
// temporal-docker/docker-compose.yml gives them (test/temporal-docker/compose.test.ts holds the two
// to the same variables), plus what only a process on a shared machine needs (its own ports).
import path from 'node:path';
import { WORKER_MALLOC_ARENAS } from '../launcher/stack';

export interface ClusterAddresses {
  temporalAddress: string;
  redisUrl: string;
  payloadKeys: string;
  /** The scripted model's /v1 when no OPENAI_API_KEY is given. */
  modelUrl?: string;
  /** Folders every worker shares, as hosts would share a volume (datastores, sessions' workspaces). */
  dataDir: string;
}

/** The Temporal Worker Deployment the cluster's workers are versions of, unless WORKER_DEPLOYMENT_NAME says otherwise. */
export const DEPLOYMENT_NAME = 'agent-service';

/** Variables the cluster sets itself: a value for them in the caller's environment is not used. */
export const CLUSTER_OWNED = [
  'TEMPORAL_ADDRESS',
  'REDIS_URL',
  'PAYLOAD_KEYS',
  'PORT',
  'HOST',
  'WORKER_METRICS_PORT',
  'METRICS_INCLUDE_URLS',
  'WORKER_BUILD_ID',
] as const;

/** What the gateways and the workers share (compose: x-app-env). */
export function sharedSettings(base: NodeJS.ProcessEnv, a: ClusterAddresses): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of CLUSTER_OWNED) delete env[k];
  return {
    ...env,
    TEMPORAL_ADDRESS: a.temporalAddress,
    TEMPORAL_NAMESPACE: base.TEMPORAL_NAMESPACE || 'default',
    TEMPORAL_TASK_QUEUE: base.TEMPORAL_TASK_QUEUE || 'agent-tasks',
    REDIS_URL: a.redisUrl,
    LOG_LEVEL: base.LOG_LEVEL || 'info',
    LOG_FORMAT: base.LOG_FORMAT || 'json',
    PAYLOAD_KEYS: a.payloadKeys,
    // Worker versioning: every worker is a version of this deployment (its build id is its own).
    WORKER_DEPLOYMENT_NAME: base.WORKER_DEPLOYMENT_NAME || DEPLOYMENT_NAME,
    // Hosts would mount one volume here; on one machine it is one folder.
    DATASTORE_DIR: base.DATASTORE_DIR || path.join(a.dataDir, 'datastores'),
    WORKSPACE_DIR: base.WORKSPACE_DIR || path.join(a.dataDir, 'workspaces'),
  };
}

/** A worker's settings (compose: the worker service): the model, its build, its own metrics port. */
export function workerSettings(
  shared: NodeJS.ProcessEnv,
  w: { metricsPort: number; buildId: string; modelUrl?: string },
): NodeJS.ProcessEnv {
  const model = shared.OPENAI_API_KEY
    ? {}
    : {
        OPENAI_BASE_URL: w.modelUrl,
        MODEL_FLASH: 'scripted-flash',
        MODEL_BASE: 'scripted-base',
        MODEL_MAX: 'scripted-max',
      };
  // glibc's malloc arenas, as npm start's worker has them.
  const arenas = { MALLOC_ARENA_MAX: shared.MALLOC_ARENA_MAX ?? WORKER_MALLOC_ARENAS };
  return { ...shared, ...arenas, ...model, WORKER_BUILD_ID: w.buildId, WORKER_METRICS_PORT: String(w.metricsPort) };
}

/** A gateway's settings (compose: the gateway service): keys, its port, the workers' metrics it includes. */
export function gatewaySettings(
  shared: NodeJS.ProcessEnv,
  port: number,
  workerMetricsPorts: number[],
): NodeJS.ProcessEnv {
  return {
    ...shared,
    HOST: '127.0.0.1',
    PORT: String(port),
    API_KEYS: shared.API_KEYS || 'dev-key:dev',
    METRICS_INCLUDE_URLS: workerMetricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`).join(','),
  };
}
