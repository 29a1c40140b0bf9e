// The complete single-machine service: a Temporal engine (ours or the real dev server), a private
// Redis with persistence, the scripted model when no OPENAI_API_KEY is set,
// the demo MCP server (unless DEMO_MCP=false), the demo web site (unless DEMO_WEB=false), the worker
// and the gateway.
// Used by `npm start` and by the end-to-end tests.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startScriptedModel } from '../scripted-model';
import type { DemoMcpServer } from '../demo-mcp/server';
import { startDemoMcp, startDemoWeb } from './demo-servers';
import {
  Child,
  ensureCommand,
  ensureDir,
  ensureRedisServer,
  freePort,
  startChild,
  startNode,
  waitFor,
} from './processes';
import { envSchema } from '../../common/config';
import { usesBrowser, usesComputer } from '../../../workflows/tool-registry';
import { GATEWAY_NODE_FLAGS } from './node-flags';
import { EngineName, engineFromEnv, startEngine } from './engines';
import { ensurePayloadKeyFile, generatePayloadKey } from '../../common/codec/keys';
import type { ChildLogs } from './child-logs';

export interface StackOptions {
  /** Data folder (engine log, Redis AOF). Absent: engine in memory, Redis without persistence. */
  dataDir?: string;
  /** Base environment for the service processes. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Gateway port; 0 = free port. Default: PORT from env, else 8080. */
  gatewayPort?: number;
  /** Port of the engine started (ENGINE); 0 = free port. Default TEMPORAL_PORT, else 7233. */
  temporalPort?: number;
  /** Web UI port of ENGINE=temporal-cli; 0 = free port; absent = headless. */
  temporalUiPort?: number;
  /** Demo MCP server port; 0 = free port. Default: DEMO_MCP_PORT from env, else 8790. */
  demoMcpPort?: number;
  /** Demo web site port; 0 = free port. Default: DEMO_WEB_PORT from env, else 8791. */
  demoWebPort?: number;
  /**
   * Port of the worker's metrics endpoint, which the gateway's /metrics then
   * includes (METRICS_INCLUDE_URLS); 0 = free port. Absent: as the environment
   * says (WORKER_METRICS_PORT, unset = none), and the gateway includes nothing more.
   */
  workerMetricsPort?: number;
  /** Where the start's progress lines go. */
  log?: (line: string) => void;
  /** Where the processes' output goes (files, the terminal); absent: kept only for error messages. */
  childLogs?: ChildLogs;
}

export interface Stack {
  gatewayUrl: string;
  temporalAddress: string;
  /** Which engine was started; undefined when TEMPORAL_ADDRESS named a server. */
  engine?: EngineName;
  /** The Temporal Web UI, when the engine started serves one. */
  temporalUiUrl?: string;
  redisUrl: string;
  modelUrl?: string;
  /** The in-process scripted model (when no OPENAI_API_KEY), for tests to inspect. */
  model?: Awaited<ReturnType<typeof startScriptedModel>>;
  /** The in-process demo MCP server's endpoint (…/mcp); undefined with DEMO_MCP=false. */
  demoMcpUrl?: string;
  demoMcp?: DemoMcpServer;
  /** The in-process demo web site and its SearXNG-style search; undefined with DEMO_WEB=false. */
  demoWebUrl?: string;
  /** The dev key created when no API_KEYS were configured. */
  devKey?: string;
  /**
   * Where the payload encryption keys (env.PAYLOAD_KEYS) came from: the
   * variable, the data folder's key file, or a key made for this run only
   * (no data folder: nothing it encrypted outlives the run).
   */
  payloadKeys:
    { source: 'PAYLOAD_KEYS' } | { source: 'file'; file: string; created: boolean } | { source: 'ephemeral' };
  env: NodeJS.ProcessEnv;
  children: Record<string, Child>;
  /** Starts a component again, as it was started (same port, same data), and makes it `children[name]`. */
  restarters: Record<string, () => Promise<Child>>;
  startWorker(): Promise<Child>;
  stop(): Promise<void>;
}

/** What the steps of startStack share: the options, and the processes started so far with how to stop them. */
export interface Starting {
  opts: StackOptions;
  base: NodeJS.ProcessEnv;
  log: (line: string) => void;
  children: Record<string, Child>;
  restarters: Record<string, () => Promise<Child>>;
  stoppers: (() => Promise<void>)[];
  /** Where a component's output lines go (ChildLogs), if anywhere. */
  echo: (name: string) => ((line: string) => void) | undefined;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const childLogs = opts.childLogs;
  const st: Starting = {
    opts,
    base: { ...(opts.env ?? process.env) },
    log: opts.log ?? (() => undefined),
    children: {},
    restarters: {},
    stoppers: [],
    echo: (name: string) => (childLogs ? (line: string) => childLogs.line(name, line) : undefined),
  };
  const { base, children, stoppers } = st;
  try {
    const engine = engineFromEnv(base);
    // Known before the engine starts: the Web UI is told where the codec endpoint is.
    const gatewayPort = opts.gatewayPort === 0 ? await freePort() : (opts.gatewayPort ?? Number(base.PORT ?? 8080));
    const codec: CodecAccess = {};
    const { temporalAddress, temporalUiUrl } = await ensureEngine(st, engine, gatewayPort, codec);
    const redisUrl = await ensureRedis(st);
    const env = serviceEnv(st, temporalAddress, redisUrl, temporalUiUrl);
    const model = base.OPENAI_API_KEY ? undefined : await startModel(st, env);
    const demoMcp = base.DEMO_MCP !== 'false' ? await startDemoMcp(st, env) : undefined;
    const demoWebUrl = base.DEMO_WEB !== 'false' ? await startDemoWeb(st, env) : undefined;
    ensureDataDirs(st, env);
    let devKey: string | undefined;
    if (!base.API_KEYS) {
      devKey = 'dev-key';
      env.API_KEYS = `${devKey}:dev`;
    }
    const payloadKeys = ensurePayloadKeys(st, env);
    if (opts.workerMetricsPort !== undefined) Object.assign(env, await workerMetricsEnv(base, opts.workerMetricsPort));
    if (codec.token) env.CODEC_AUTH_TOKEN = codec.token;
    if (codec.corsOrigins) env.CODEC_CORS_ORIGINS = codec.corsOrigins;
    env.PORT = String(gatewayPort);
    const { startWorker, gatewayUrl } = await startWorkerAndGateway(st, env, gatewayPort);
    return {
      gatewayUrl,
      temporalAddress,
      engine: children.engine ? engine : undefined,
      temporalUiUrl,
      redisUrl,
      modelUrl: model?.url,
      model,
      demoMcpUrl: demoMcp?.url,
      demoMcp,
      demoWebUrl,
      devKey,
      payloadKeys,
      env,
      children,
      restarters: st.restarters,
      startWorker,
      stop: async () => {
        for (const s of stoppers) await s().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const s of stoppers) await s().catch(() => undefined);
    throw err;
  }
}

/** How the Web UI of ENGINE=temporal-cli reaches the gateway's codec endpoint (the gateway is told the same). */
interface CodecAccess {
  token?: string;
  corsOrigins?: string;
}

/** The engine ENGINE names, started unless TEMPORAL_ADDRESS names a server. */
async function ensureEngine(
  st: Starting,
  engine: EngineName,
  gatewayPort: number,
  codec: CodecAccess,
): Promise<{ temporalAddress: string; temporalUiUrl?: string }> {
  const { opts, base, children, log } = st;
  if (base.TEMPORAL_ADDRESS) return { temporalAddress: base.TEMPORAL_ADDRESS };
  const port = opts.temporalPort === 0 ? await freePort() : (opts.temporalPort ?? Number(base.TEMPORAL_PORT || 7233));
  const uiPort = opts.temporalUiPort === 0 ? await freePort() : opts.temporalUiPort;
  let uiCodecEndpoint: string | undefined;
  if (engine === 'temporal-cli' && uiPort) {
    // The UI decrypts through the gateway's codec endpoint. It cannot send a
    // header, so the token is in the endpoint's path (this UI is on loopback).
    codec.token = base.CODEC_AUTH_TOKEN || randomBytes(24).toString('base64url');
    uiCodecEndpoint = `http://127.0.0.1:${gatewayPort}/codec/${codec.token}`;
    if (!base.CODEC_CORS_ORIGINS) codec.corsOrigins = `http://127.0.0.1:${uiPort},http://localhost:${uiPort}`;
  }
  const maxClosedInMemory = base.ENGINE_MAX_CLOSED_IN_MEMORY ? Number(base.ENGINE_MAX_CLOSED_IN_MEMORY) : undefined;
  const engineOptions = {
    engine,
    port,
    dataDir: opts.dataDir,
    uiPort,
    uiCodecEndpoint,
    maxClosedInMemory,
    echo: st.echo('engine'),
  };
  const running = await startEngine(engineOptions);
  children.engine = running.child;
  st.restarters.engine = async () => (children.engine = (await startEngine(engineOptions)).child);
  st.stoppers.unshift(() => children.engine.stop());
  const what = engine === 'embedded' ? 'embedded Temporal engine' : 'Temporal CLI dev server';
  log(`${what} on ${running.address}${running.dbFile ? ` (data: ${running.dbFile})` : ' (in memory)'}`);
  return { temporalAddress: running.address, temporalUiUrl: running.uiUrl };
}

/** A private redis-server unless REDIS_URL names one; with a data folder it keeps an append-only file there. */
async function ensureRedis(st: Starting): Promise<string> {
  const { opts, base, children, log } = st;
  if (base.REDIS_URL) return base.REDIS_URL;
  const bin = ensureRedisServer(log);
  const port = await freePort();
  const args = redisArgs(port, opts.dataDir);
  const url = `redis://127.0.0.1:${port}`;
  const startRedis = async () => {
    const child = (children.redis = startChild('redis', bin, args, { echo: st.echo('redis') }));
    await waitFor('redis-server', child, async () => {
      const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => undefined); // not up yet: the loop retries
      try {
        await r.connect();
        return (await r.ping()) === 'PONG';
      } finally {
        r.disconnect();
      }
    });
    return child;
  };
  st.stoppers.unshift(() => children.redis.stop());
  await startRedis();
  st.restarters.redis = startRedis;
  log(`private redis-server on ${url}${opts.dataDir ? ' (append-only file on)' : ''}`);
  return url;
}

function redisArgs(port: number, dataDir: string | undefined): string[] {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ];
  if (dataDir)
    args.push('--dir', ensureDir(path.join(dataDir, 'redis')), '--appendonly', 'yes', '--appendfsync', 'everysec');
  else args.push('--appendonly', 'no');
  return args;
}

/** The environment of the service's processes, to which the later steps add. */
function serviceEnv(st: Starting, temporalAddress: string, redisUrl: string, uiUrl?: string): NodeJS.ProcessEnv {
  // The processes log JSON lines: the launcher renders them in the format asked for (ChildLogs).
  const env: NodeJS.ProcessEnv = {
    ...st.base,
    TEMPORAL_ADDRESS: temporalAddress,
    REDIS_URL: redisUrl,
    LOG_FORMAT: 'json',
  };
  // The embedded engine is on loopback: compression would only cost CPU on both sides.
  if (st.children.engine && !st.base.TEMPORAL_GRPC_COMPRESSION) env.TEMPORAL_GRPC_COMPRESSION = 'none';
  // The web console links each task to its workflow in the dev server's Web UI.
  if (uiUrl && !st.base.TEMPORAL_UI_URL) env.TEMPORAL_UI_URL = uiUrl;
  return env;
}

/** No OPENAI_API_KEY: the built-in scripted model, in process, and the service pointed at it. */
async function startModel(st: Starting, env: NodeJS.ProcessEnv): Promise<Stack['model']> {
  const model = await startScriptedModel({ port: 0 });
  st.stoppers.unshift(() => model.close());
  Object.assign(env, {
    OPENAI_BASE_URL: model.url,
    MODEL_FLASH: 'scripted-flash',
    MODEL_BASE: 'scripted-base',
    MODEL_MAX: 'scripted-max',
  });
  st.log(`no OPENAI_API_KEY: using the built-in scripted model at ${model.url} (offline demo mode)`);
  return model;
}

/** Datastore files (uploads, knowledge bases) and sessions' workspaces beside the engine's file; a stack kept in memory gets folders of its own. */
function ensureDataDirs(st: Starting, env: NodeJS.ProcessEnv): void {
  for (const [variable, name] of [
    ['DATASTORE_DIR', 'datastores'],
    ['WORKSPACE_DIR', 'workspaces'],
  ] as const) {
    if (st.base[variable]) continue;
    if (st.opts.dataDir) env[variable] = ensureDir(path.join(st.opts.dataDir, name));
    else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `aes-${name}-`));
      env[variable] = dir;
      st.stoppers.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    }
  }
}

/**
 * Every payload the service hands Temporal is encrypted (src/common/codec). The
 * key file is made here, by the one process that starts both the gateway
 * and the worker, and passed to them (and kept in `env` for tests' clients).
 */
function ensurePayloadKeys(st: Starting, env: NodeJS.ProcessEnv): Stack['payloadKeys'] {
  if (st.base.PAYLOAD_KEYS) return { source: 'PAYLOAD_KEYS' };
  const dataDir = st.opts.dataDir;
  if (!dataDir) {
    env.PAYLOAD_KEYS = generatePayloadKey();
    return { source: 'ephemeral' };
  }
  const k = ensurePayloadKeyFile(dataDir);
  env.PAYLOAD_KEYS = k.keys;
  st.log(`payload encryption key ${k.created ? 'created in' : 'from'} ${k.file}`);
  return { source: 'file', file: k.file, created: k.created };
}

/**
 * The session's computer (on unless BUILTIN_TOOLS leaves it out) needs bubblewrap, its sandbox,
 * and ripgrep, its glob and grep; the browser needs Chromium: installed with apt when missing, as
 * Redis is.
 */
function ensureComputerCommands(st: Starting, env: NodeJS.ProcessEnv): void {
  const tools = envSchema.shape.BUILTIN_TOOLS.safeParse(env.BUILTIN_TOOLS || undefined);
  if (!tools.success) return;
  if (usesComputer(tools.data)) {
    const orElse = "or leave the computer out of BUILTIN_TOOLS (the agent's bash, editor and search tools)";
    ensureCommand({ bin: 'bwrap', pkg: 'bubblewrap', orElse }, st.log);
    ensureCommand({ bin: 'rg', pkg: 'ripgrep', orElse }, st.log);
  }
  // The browser tools drive Debian's Chromium: installed the same way, never downloaded at run time.
  if (usesBrowser(tools.data) && !env.BROWSER_EXECUTABLE) {
    const orElse = 'or set BROWSER_EXECUTABLE to a Chromium, or leave the browser out of BUILTIN_TOOLS';
    ensureCommand({ bin: 'chromium', pkg: 'chromium', orElse }, st.log);
  }
}

/**
 * glibc's malloc arenas for the worker (MALLOC_ARENA_MAX; the environment's own value wins). By
 * default each thread that allocates may get an arena of its own, up to 8 per core, and what a
 * burst freed in them seldom goes back to the system: after a soak of 10 bursts of 300 tasks the
 * worker held 663 MiB with a V8 heap of 162; with two arenas, 354 MiB (docs/design.md, "The cost
 * of a run"), at the same CPU per task.
 */
export const WORKER_MALLOC_ARENAS = '2';

/** The worker, then the gateway once the worker is ready; each can be started again (restarters). */
async function startWorkerAndGateway(
  st: Starting,
  env: NodeJS.ProcessEnv,
  gatewayPort: number,
): Promise<{ startWorker: () => Promise<Child>; gatewayUrl: string }> {
  const { children, stoppers, restarters } = st;
  ensureComputerCommands(st, env);
  const startWorker = async () => {
    const w = startNode('worker', 'src/worker/main.ts', [], {
      env: { MALLOC_ARENA_MAX: WORKER_MALLOC_ARENAS, ...env },
      echo: st.echo('worker'),
    });
    children.worker = w;
    await waitFor('worker', w, () => w.isReady(), 90_000);
    return w;
  };
  stoppers.unshift(() => children.worker.stop());
  await startWorker();
  restarters.worker = startWorker;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const startGateway = async () => {
    const g = (children.gateway = startNode('gateway', 'src/gateway/main.ts', [], {
      env,
      echo: st.echo('gateway'),
      nodeArgs: GATEWAY_NODE_FLAGS,
    }));
    await waitFor('gateway', g, async () => (await fetch(`${gatewayUrl}/healthz`)).ok);
    return g;
  };
  // The gateway drains first (GATEWAY_DRAIN_MS): give it that long before a SIGKILL.
  const drainMs = Number(env.GATEWAY_DRAIN_MS || 10_000);
  stoppers.unshift(() => children.gateway.stop('SIGTERM', drainMs + 5000));
  await startGateway();
  restarters.gateway = startGateway;
  return { startWorker, gatewayUrl };
}

/** The worker's metrics port, and the gateway told to include that endpoint (besides any METRICS_INCLUDE_URLS given). */
async function workerMetricsEnv(base: NodeJS.ProcessEnv, wanted: number): Promise<NodeJS.ProcessEnv> {
  const port = wanted === 0 ? await freePort() : wanted;
  const host = base.WORKER_METRICS_HOST || '127.0.0.1';
  // A wildcard bind is reached on loopback; an IPv6 address goes in brackets.
  const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const include = [`http://${reach}:${port}/metrics`, base.METRICS_INCLUDE_URLS].filter(Boolean).join(',');
  return { WORKER_METRICS_PORT: String(port), METRICS_INCLUDE_URLS: include };
}
