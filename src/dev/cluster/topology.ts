// The production topology on one machine (scripts/cluster.sh): PostgreSQL, the official Temporal
// server on it (persistence and SQL visibility), Redis, the scripted model unless OPENAI_API_KEY
// is set, workers, gateways and HAProxy in front of the gateways. Every process is detached and
// listed in <dir>/cluster.json; `down` stops them in the reverse order and removes the folder.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { ensureRedisServer, freePort, ROOT } from '../launcher/processes';
import { GATEWAY_NODE_FLAGS } from '../launcher/node-flags';
import { ensurePayloadKeyFile } from '../../common/codec/keys';
import { postgresPid, startPostgresServer, stopPostgresServer } from '../postgres-server';
import { isAlive, startDetached, startDetachedNode, stopPid } from './detached';
import { ensureHaproxy, haproxyConfig } from './load-balancer';
import { ClusterNode, ClusterState, readState, writeState } from './state';
import { DEPLOYMENT_NAME, gatewaySettings, sharedSettings, workerSettings } from './settings';
import {
  ensureTemporalServer,
  setupTemporalSchemas,
  TEMPORAL_SERVER_VERSION,
  temporalServerConfig,
  type TemporalDatabase,
  type TemporalServerTools,
} from './temporal-server';
import { waitForReady } from './readiness';
import { checkoutBuildId, pollsTaskQueue, setCurrentVersion, withConnection } from './versions';

/** The order in which `up` starts the roles; `down` stops them in the reverse. */
const START_ORDER: ClusterNode['role'][] = [
  'postgres',
  'temporal',
  'redis',
  'model',
  'worker',
  'gateway',
  'load-balancer',
];

export interface UpOptions {
  dir: string;
  workers: number;
  gateways: number;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** Brings the whole topology up from nothing in `dir` (which must not hold a running cluster). */
export async function up(opts: UpOptions): Promise<ClusterState> {
  const running = readState(opts.dir);
  if (running?.nodes.some((n) => isAlive(n.pid)))
    throw new Error(`a cluster is already up in ${opts.dir} (scripts/cluster.sh down first)`);
  // Only a folder of ours (an earlier cluster's) is emptied: CLUSTER_DIR may name anything.
  const entries = fs.existsSync(opts.dir) ? fs.readdirSync(opts.dir) : [];
  if (entries.length && !running)
    throw new Error(`${opts.dir} is not empty and holds no cluster: name an empty or new folder (CLUSTER_DIR)`);
  fs.rmSync(opts.dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(opts.dir, 'logs'), { recursive: true });
  // Every tool first: a missing one fails before anything starts.
  const tools = ensureTemporalServer(opts.log);
  const haproxy = ensureHaproxy(opts.log);
  const redisBin = ensureRedisServer(opts.log);
  const state: ClusterState = {
    dir: opts.dir,
    gatewayUrl: '',
    temporalAddress: '',
    redisUrl: '',
    temporalServerVersion: TEMPORAL_SERVER_VERSION,
    namespace: namespaceOf(opts.env),
    deployment: {
      name: opts.env.WORKER_DEPLOYMENT_NAME || DEPLOYMENT_NAME,
      currentBuildId: opts.env.WORKER_BUILD_ID || checkoutBuildId(),
    },
    nodes: [],
  };
  const logDir = path.join(opts.dir, 'logs');
  writeState(state);
  try {
    const db = await startDatabase(state);
    opts.log(`PostgreSQL on 127.0.0.1:${db.port}`);
    setupTemporalSchemas(tools, db);
    await startTemporal(state, tools, db, opts);
    await startRedis(state, redisBin, logDir);
    const payloadKeys = opts.env.PAYLOAD_KEYS || ensurePayloadKeyFile(opts.dir).keys;
    if (!opts.env.OPENAI_API_KEY) await startModel(state, logDir);
    const shared = sharedSettings(opts.env, { ...state, payloadKeys, dataDir: opts.dir });
    // For processes added later (a test's replacement worker): secrets inside, so only ours to read.
    fs.writeFileSync(serviceEnvFile(opts.dir), JSON.stringify(shared), { mode: 0o600 });
    // One after the other: each worker registers the search attributes it finds missing.
    for (let i = 1; i <= opts.workers; i++) await startWorker(state, `worker-${i}`);
    // The first build: until a version is current, new runs would wait for unversioned workers.
    const { name, currentBuildId } = state.deployment;
    await setCurrentVersion(state.temporalAddress, state.namespace, name, currentBuildId);
    for (let i = 1; i <= opts.gateways; i++) await startGateway(state, `gateway-${i}`);
    await startLoadBalancer(state, haproxy, logDir);
    writeState(state);
    return state;
  } catch (err) {
    await down(opts.dir, { keepDir: true }).catch(() => undefined);
    throw err;
  }
}

/** The Temporal server on free ports, its configuration in <dir>/temporal/config; ready once the namespace is there. */
async function startTemporal(
  state: ClusterState,
  tools: TemporalServerTools,
  db: TemporalDatabase,
  opts: UpOptions,
): Promise<void> {
  const grpc = await freePort();
  const internal = await Promise.all(Array.from({ length: 7 }, () => freePort()));
  const ports = { grpc, http: await freePort(), metrics: await freePort(), internal };
  const root = path.join(opts.dir, 'temporal');
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  const dynamicConfig = path.join(ROOT, 'temporal-docker', 'dynamicconfig', 'development.yaml');
  fs.writeFileSync(path.join(root, 'config', 'cluster.yaml'), temporalServerConfig(db, ports, dynamicConfig));
  const args = ['--root', root, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'];
  const logDir = path.join(opts.dir, 'logs');
  const temporal: ClusterNode = {
    role: 'temporal',
    ...startDetached('temporal', tools.server, args, { env: process.env, logDir }),
  };
  addNode(state, temporal);
  state.temporalAddress = `127.0.0.1:${grpc}`;
  await waitForReady(temporal, () => registerNamespace(state.temporalAddress, opts.env), 120_000);
  opts.log(
    `Temporal server ${TEMPORAL_SERVER_VERSION} on ${state.temporalAddress} (PostgreSQL persistence and visibility)`,
  );
}

async function startDatabase(state: ClusterState) {
  const pgDir = path.join(state.dir, 'postgres');
  fs.mkdirSync(pgDir, { recursive: true });
  const port = await freePort();
  // The server's own connections are many (history shards, matching, visibility): room for them and the tests'.
  startPostgresServer({
    dir: pgDir,
    port,
    hba: ['local all all trust', 'host all postgres 127.0.0.1/32 trust', 'host all all 127.0.0.1/32 scram-sha-256'],
    settings: { max_connections: '200' },
  });
  addNode(state, { role: 'postgres', name: 'postgres', pid: postgresPid(pgDir) ?? 0, log: path.join(pgDir, 'log') });
  const password = crypto.randomBytes(12).toString('hex');
  const admin = new pg.Client(`postgres://postgres@127.0.0.1:${port}/postgres`);
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE temporal LOGIN CREATEDB PASSWORD '${password}'`);
  } finally {
    await admin.end();
  }
  return { host: '127.0.0.1', port, user: 'temporal', password };
}

export const namespaceOf = (env: NodeJS.ProcessEnv) => env.TEMPORAL_NAMESPACE || 'default';

/** The `default` namespace (or TEMPORAL_NAMESPACE): what auto-setup does in the compose file. */
async function registerNamespace(address: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return withConnection(address, async (connection) => {
    const namespace = namespaceOf(env);
    const days = Number(env.RETENTION_DAYS || 7);
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: { seconds: days * 86400 } as never })
      .catch((err: { code?: number }) => {
        if (err.code !== 6) throw err; // ALREADY_EXISTS: a retry after a lost answer
      });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  });
}

async function startRedis(state: ClusterState, bin: string, logDir: string) {
  const port = await freePort();
  const redisDir = path.join(state.dir, 'redis');
  fs.mkdirSync(redisDir, { recursive: true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', redisDir];
  args.push('--appendonly', 'yes', '--appendfsync', 'everysec', '--loglevel', 'warning');
  const redis = addNode(state, { role: 'redis', ...startDetached('redis', bin, args, { env: process.env, logDir }) });
  state.redisUrl = `redis://127.0.0.1:${port}`;
  await waitForReady(redis, () => tcpAnswers(port, 'PING\r\n', '+PONG'));
}

async function startModel(state: ClusterState, logDir: string) {
  const port = await freePort();
  const model = addNode(state, {
    role: 'model',
    port,
    ...startDetachedNode('model', 'src/dev/scripted-model/main.ts', {
      env: process.env,
      logDir,
      args: ['--port', String(port)],
    }),
  });
  state.modelUrl = `http://127.0.0.1:${port}/v1`;
  await waitForReady(model, async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok);
}

const serviceEnvFile = (dir: string) => path.join(dir, 'service-env.json');
const sharedEnv = (dir: string): NodeJS.ProcessEnv => JSON.parse(fs.readFileSync(serviceEnvFile(dir), 'utf8'));

export interface WorkerStart {
  /** Its metrics port (again: its old one, which the gateways include). */
  port?: number;
  /** Its build: the deployment's current one by default. */
  buildId?: string;
  /** The release it runs, checked out there (node_modules included): this checkout by default. */
  releaseDir?: string;
}

/** Starts a worker named `name` in the cluster of `state` (at `up`, a rollout's, or again after it stopped) and waits for it. */
export async function startWorker(state: ClusterState, name: string, w: WorkerStart = {}): Promise<ClusterNode> {
  const port = w.port ?? (await freePort());
  const buildId = w.buildId ?? state.deployment.currentBuildId;
  const env = workerSettings(sharedEnv(state.dir), { metricsPort: port, buildId, modelUrl: state.modelUrl });
  const logDir = path.join(state.dir, 'logs');
  const started = startDetachedNode(name, 'src/worker/main.ts', { env, logDir, root: w.releaseDir });
  const node: ClusterNode = {
    role: 'worker',
    port,
    buildId,
    ...started,
    ...(w.releaseDir && { releaseDir: w.releaseDir }),
  };
  addNode(state, node);
  // Ready once the server sees it poll (whatever its LOG_LEVEL says).
  const queue = env.TEMPORAL_TASK_QUEUE || 'agent-tasks';
  await waitForReady(node, () => pollsTaskQueue(state.temporalAddress, state.namespace, queue, node.pid), 120_000);
  return node;
}

/** Starts a gateway named `name` (again: on its old port, the load balancer's) and waits until it is ready. */
export async function startGateway(state: ClusterState, name: string, port?: number): Promise<ClusterNode> {
  port ??= await freePort();
  const workerPorts = state.nodes.filter((n) => n.role === 'worker').map((n) => n.port!);
  const env = gatewaySettings(sharedEnv(state.dir), port, workerPorts);
  const logDir = path.join(state.dir, 'logs');
  const entry = 'src/gateway/main.ts';
  const node: ClusterNode = {
    role: 'gateway',
    port,
    ...startDetachedNode(name, entry, { env, logDir, nodeArgs: GATEWAY_NODE_FLAGS }),
  };
  addNode(state, node);
  await waitForReady(node, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok);
  return node;
}

/** Records a process in the state (a name started again replaces its old entry). */
function addNode(state: ClusterState, node: ClusterNode): ClusterNode {
  state.nodes = [...state.nodes.filter((n) => n.name !== node.name), node];
  writeState(state);
  return node;
}

/** HAProxy in front of the cluster's gateways (by their names and ports). */
async function startLoadBalancer(state: ClusterState, bin: string, logDir: string) {
  const port = await freePort();
  const file = path.join(state.dir, 'haproxy.cfg');
  const gateways = state.nodes.filter((n) => n.role === 'gateway').map((n) => ({ name: n.name, port: n.port! }));
  fs.writeFileSync(file, haproxyConfig(port, gateways));
  // -db: in the foreground (not haproxy's own daemon mode), so the pid started is the one to stop.
  const lb = addNode(state, {
    role: 'load-balancer',
    port,
    ...startDetached('haproxy', bin, ['-db', '-f', file], { env: process.env, logDir }),
  });
  state.gatewayUrl = `http://127.0.0.1:${port}`;
  await waitForReady(lb, async () => (await fetch(`${state.gatewayUrl}/readyz`)).ok);
}

async function tcpAnswers(port: number, send: string, expect: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(send));
    s.setTimeout(1000, () => s.destroy());
    s.on('data', (d) => {
      resolve(d.toString().startsWith(expect));
      s.destroy();
    });
    s.on('error', () => resolve(false));
    s.on('close', () => resolve(false));
  });
}

/** Stops every process of the cluster in `dir` (the reverse of their start) and removes the folder. */
export async function down(dir: string, opts: { keepDir?: boolean } = {}): Promise<boolean> {
  const state = readState(dir);
  if (!state) return false; // not a cluster's folder: nothing of ours to stop or remove
  // Role by role, in the reverse of the start; the processes of one role at once.
  for (const role of [...START_ORDER].reverse()) {
    const nodes = state.nodes.filter((n) => n.role === role);
    if (role === 'postgres') {
      if (nodes.some((n) => isAlive(n.pid))) stopPostgresServer(path.join(dir, 'postgres'));
      continue;
    }
    // A gateway drains its streams first (GATEWAY_DRAIN_MS, 10 s by default).
    await Promise.all(nodes.map((n) => stopPid(n.pid, 'SIGTERM', role === 'gateway' ? 20_000 : 15_000)));
  }
  if (!opts.keepDir) fs.rmSync(dir, { recursive: true, force: true });
  return true;
}

/** `down` at once, synchronously (a process exiting on Ctrl-C cannot wait): SIGKILL to every process, the database stopped, the folder removed. */
export function killCluster(dir: string): void {
  const state = readState(dir);
  if (!state) return;
  for (const n of state.nodes) {
    if (n.role === 'postgres' || !isAlive(n.pid)) continue;
    try {
      process.kill(n.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  try {
    if (state.nodes.some((n) => n.role === 'postgres' && isAlive(n.pid)))
      stopPostgresServer(path.join(dir, 'postgres'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
