// The cluster of the cluster pass, as its test files see it: its state (processes, ports), an
// API caller through the load balancer or one gateway, a Temporal client, and the processes'
// stops and restarts (src/dev/cluster).
import fs from 'node:fs';
import type { Stack } from '../../src/dev/launcher/stack';
import { payloadKeyFile, readPayloadKeyFile } from '../../src/common/codec/keys';
import { readState, type ClusterNode, type ClusterState } from '../../src/dev/cluster/state';
import { stopPid } from '../../src/dev/cluster/detached';
import { startGateway, startWorker } from '../../src/dev/cluster/topology';
import { api, type Api } from '../e2e/helpers';

export function clusterState(): ClusterState {
  const dir = process.env.CLUSTER_DIR;
  const state = dir ? readState(dir) : undefined;
  if (!state) throw new Error('no cluster: run the cluster pass with `npx jest -c jest.cluster.config.js`');
  return state;
}

/** The e2e helpers' view of a stack, for a base URL of the cluster (the load balancer by default). */
export function clusterStack(url?: string): Stack {
  const state = clusterState();
  const keys = readPayloadKeyFile(payloadKeyFile(state.dir));
  return {
    gatewayUrl: url ?? state.gatewayUrl,
    temporalAddress: state.temporalAddress,
    redisUrl: state.redisUrl,
    env: { PAYLOAD_KEYS: keys },
  } as unknown as Stack;
}

/** An API caller through the load balancer, or through the gateway named (`gateway-1`). */
export function clusterApi(gateway?: string): Api {
  return api(clusterStack(gateway ? nodeUrl(gateway) : undefined));
}

export function node(name: string): ClusterNode {
  const n = clusterState().nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no process named ${name} in the cluster`);
  return n;
}

export const nodeUrl = (name: string) => `http://127.0.0.1:${node(name).port}`;

/** Kills a process of the cluster (SIGKILL: a crash; SIGTERM: a drain) and waits until it is gone. */
export async function stopNode(name: string, signal: NodeJS.Signals): Promise<void> {
  await stopPid(node(name).pid, signal, 60_000);
}

/** Starts the worker or gateway named again (same name, same port), as an orchestrator would. */
export async function restartNode(name: string): Promise<ClusterNode> {
  const state = clusterState();
  const { port, buildId, releaseDir } = node(name);
  return name.startsWith('worker')
    ? startWorker(state, name, { port, buildId, releaseDir })
    : startGateway(state, name, port);
}

/** The log of a process of the cluster, for what it said. */
export const nodeLog = (name: string) => fs.readFileSync(node(name).log, 'utf8');
