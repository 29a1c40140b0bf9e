// What `scripts/cluster.sh up` started, kept in <dir>/cluster.json for `down`, `status` and the
// cluster tests (which kill, drain and add processes by it). No secret is in it: the payload key
// is in its own file (payload-keys, mode 0600), as `npm start` keeps it.
import fs from 'node:fs';
import path from 'node:path';
import type { DetachedProcess } from './detached';

export interface ClusterNode extends DetachedProcess {
  /** gateway or worker processes: their own port (the gateway's HTTP, the worker's metrics). */
  port?: number;
  /** A worker: the build it runs (its Worker Deployment version), and the release folder it runs from when not this checkout. */
  buildId?: string;
  releaseDir?: string;
  role: 'postgres' | 'temporal' | 'redis' | 'model' | 'worker' | 'gateway' | 'load-balancer';
}

export interface ClusterState {
  dir: string;
  gatewayUrl: string;
  temporalAddress: string;
  redisUrl: string;
  modelUrl?: string;
  temporalServerVersion: string;
  /** The Temporal namespace of the service's runs (TEMPORAL_NAMESPACE at `up`). */
  namespace: string;
  /** The Temporal Worker Deployment the workers are versions of, and the build new runs go to. */
  deployment: { name: string; currentBuildId: string };
  /** In the order they were started; `down` stops them in the reverse order. */
  nodes: ClusterNode[];
}

export const stateFile = (dir: string) => path.join(dir, 'cluster.json');

export function readState(dir: string): ClusterState | undefined {
  try {
    return JSON.parse(fs.readFileSync(stateFile(dir), 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

export function writeState(state: ClusterState): void {
  const file = stateFile(state.dir);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/** The lines `up` ends with, for scripts: `eval "$(scripts/cluster.sh up | grep =)"` or a dotenv reader. */
export function stateLines(state: ClusterState): string[] {
  return [
    `GATEWAY_URL=${state.gatewayUrl}`,
    `TEMPORAL_ADDRESS=${state.temporalAddress}`,
    `REDIS_URL=${state.redisUrl}`,
  ];
}
