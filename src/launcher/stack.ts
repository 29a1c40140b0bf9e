// The complete single-machine service: a Temporal engine (ours or the real dev server), a private
// Redis with persistence, the scripted model when no OPENAI_API_KEY is set,
// the demo MCP server (unless DEMO_MCP=false), the worker and the gateway.
// Used by `npm start` and by the end-to-end tests.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startScriptedModel } from '../scripted-model';
import { DEMO_MCP_TOOLS, startDemoMcpServer } from '../demo-mcp/server';
import { Child, ensureDir, ensureRedisServer, freePort, startChild, startNode, waitFor } from './processes';
import { GATEWAY_NODE_FLAGS } from './node-flags';
import { EngineName, engineFromEnv, startEngine } from './engines';
import { ensurePayloadKeyFile, generatePayloadKey } from '../codec/keys';
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
  demoMcp?: Awaited<ReturnType<typeof startDemoMcpServer>>;
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

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const log = opts.log ?? (() => undefined);
  const base = { ...(opts.env ?? process.env) };
  const children: Record<string, Child> = {};
  const restarters: Record<string, () => Promise<Child>> = {};
  const stoppers: (() => Promise<void>)[] = [];
  const childLogs = opts.childLogs;
  const echo = (name: string) => (childLogs ? (line: string) => childLogs.line(name, line) : undefined);
  try {
    let temporalAddress = base.TEMPORAL_ADDRESS;
    let temporalUiUrl: string | undefined;
    const engine = engineFromEnv(base);
    // Known before the engine starts: the Web UI is told where the codec endpoint is.
    const gatewayPort = opts.gatewayPort === 0 ? await freePort() : (opts.gatewayPort ?? Number(base.PORT ?? 8080));
    const codec: { token?: string; corsOrigins?: string } = {};
    if (!temporalAddress) {
      const port =
        opts.temporalPort === 0 ? await freePort() : (opts.temporalPort ?? Number(base.TEMPORAL_PORT || 7233));
      const uiPort = opts.temporalUiPort === 0 ? await freePort() : opts.temporalUiPort;
      let uiCodecEndpoint: string | undefined;
      if (engine === 'temporal-cli' && uiPort) {
        // The UI decrypts through the gateway's codec endpoint. It cannot send a
        // header, so the token is in the endpoint's path (this UI is on loopback).
        codec.token = base.CODEC_AUTH_TOKEN || randomBytes(24).toString('base64url');
        uiCodecEndpoint = `http://127.0.0.1:${gatewayPort}/codec/${codec.token}`;
        if (!base.CODEC_CORS_ORIGINS) codec.corsOrigins = `http://127.0.0.1:${uiPort},http://localhost:${uiPort}`;
      }
      const engineOptions = { engine, port, dataDir: opts.dataDir, uiPort, uiCodecEndpoint, echo: echo('engine') };
      const running = await startEngine(engineOptions);
      children.engine = running.child;
      restarters.engine = async () => (children.engine = (await startEngine(engineOptions)).child);
      stoppers.unshift(() => children.engine.stop());
      temporalAddress = running.address;
      temporalUiUrl = running.uiUrl;
      const what = engine === 'embedded' ? 'embedded Temporal engine' : 'Temporal CLI dev server';
      log(`${what} on ${temporalAddress}${running.dbFile ? ` (data: ${running.dbFile})` : ' (in memory)'}`);
    }

    let redisUrl = base.REDIS_URL;
    if (!redisUrl) {
      const bin = ensureRedisServer(log);
      const port = await freePort();
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
      if (opts.dataDir)
        args.push(
          '--dir',
          ensureDir(path.join(opts.dataDir, 'redis')),
          '--appendonly',
          'yes',
          '--appendfsync',
          'everysec',
        );
      else args.push('--appendonly', 'no');
      redisUrl = `redis://127.0.0.1:${port}`;
      const url = redisUrl;
      const startRedis = async () => {
        const child = (children.redis = startChild('redis', bin, args, { echo: echo('redis') }));
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
      stoppers.unshift(() => children.redis.stop());
      await startRedis();
      restarters.redis = startRedis;
      log(`private redis-server on ${redisUrl}${opts.dataDir ? ' (append-only file on)' : ''}`);
    }

    let modelUrl: string | undefined;
    let model: Stack['model'];
    // The processes log JSON lines: the launcher renders them in the format asked for (ChildLogs).
    const env: NodeJS.ProcessEnv = {
      ...base,
      TEMPORAL_ADDRESS: temporalAddress,
      REDIS_URL: redisUrl,
      LOG_FORMAT: 'json',
    };
    // The embedded engine is on loopback: compression would only cost CPU on both sides.
    if (children.engine && !base.TEMPORAL_GRPC_COMPRESSION) env.TEMPORAL_GRPC_COMPRESSION = 'none';
    if (!base.OPENAI_API_KEY) {
      model = await startScriptedModel({ port: 0 });
      const m = model;
      stoppers.unshift(() => m.close());
      modelUrl = model.url;
      Object.assign(env, {
        OPENAI_BASE_URL: model.url,
        MODEL_FLASH: 'scripted-flash',
        MODEL_BASE: 'scripted-base',
        MODEL_MAX: 'scripted-max',
      });
      log(`no OPENAI_API_KEY: using the built-in scripted model at ${model.url} (offline demo mode)`);
    }
    let demoMcp: Stack['demoMcp'];
    if (base.DEMO_MCP !== 'false') {
      const port = opts.demoMcpPort ?? Number(base.DEMO_MCP_PORT || 8790);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new Error(`DEMO_MCP_PORT must be a port number, got ${base.DEMO_MCP_PORT}`);
      demoMcp = await startDemoMcpServer({ port }).catch((err: Error) => {
        throw new Error(
          `demo MCP server could not start on port ${port} (${err.message}); set DEMO_MCP_PORT, or DEMO_MCP=false to go without it`,
        );
      });
      const d = demoMcp;
      stoppers.unshift(() => d.close());
      log(`demo MCP server at ${demoMcp.url} (tools: ${DEMO_MCP_TOOLS.join(', ')})`);
      // The outbound policy refuses loopback addresses; without this the service could not reach its own demo server.
      if (base.OUTBOUND_ALLOWLIST === undefined) {
        env.OUTBOUND_ALLOWLIST = '127.0.0.1';
        log('OUTBOUND_ALLOWLIST unset: allowing 127.0.0.1 (loopback) so runs can reach the demo MCP server');
      }
    }
    // Datastore files (uploads, knowledge bases) beside the engine's file; a stack kept in memory gets a folder of its own.
    if (!base.DATASTORE_DIR) {
      if (opts.dataDir) env.DATASTORE_DIR = ensureDir(path.join(opts.dataDir, 'datastores'));
      else {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-datastores-'));
        env.DATASTORE_DIR = dir;
        stoppers.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
      }
    }
    let devKey: string | undefined;
    if (!base.API_KEYS) {
      devKey = 'dev-key';
      env.API_KEYS = `${devKey}:dev`;
    }
    // Every payload the service hands Temporal is encrypted (src/codec). The
    // key file is made here, by the one process that starts both the gateway
    // and the worker, and passed to them (and kept in `env` for tests' clients).
    let payloadKeys: Stack['payloadKeys'] = { source: 'PAYLOAD_KEYS' };
    if (!base.PAYLOAD_KEYS) {
      if (opts.dataDir) {
        const k = ensurePayloadKeyFile(opts.dataDir);
        env.PAYLOAD_KEYS = k.keys;
        payloadKeys = { source: 'file', file: k.file, created: k.created };
        log(`payload encryption key ${k.created ? 'created in' : 'from'} ${k.file}`);
      } else {
        env.PAYLOAD_KEYS = generatePayloadKey();
        payloadKeys = { source: 'ephemeral' };
      }
    }
    if (opts.workerMetricsPort !== undefined) Object.assign(env, await workerMetricsEnv(base, opts.workerMetricsPort));
    if (codec.token) env.CODEC_AUTH_TOKEN = codec.token;
    if (codec.corsOrigins) env.CODEC_CORS_ORIGINS = codec.corsOrigins;
    env.PORT = String(gatewayPort);

    const startWorker = async () => {
      const w = startNode('worker', 'src/worker/main.ts', [], { env, echo: echo('worker') });
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
        echo: echo('gateway'),
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
    return {
      gatewayUrl,
      temporalAddress,
      engine: children.engine ? engine : undefined,
      temporalUiUrl,
      redisUrl,
      modelUrl,
      model,
      demoMcpUrl: demoMcp?.url,
      demoMcp,
      devKey,
      payloadKeys,
      env,
      children,
      restarters,
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

/** The worker's metrics port, and the gateway told to include that endpoint (besides any METRICS_INCLUDE_URLS given). */
async function workerMetricsEnv(base: NodeJS.ProcessEnv, wanted: number): Promise<NodeJS.ProcessEnv> {
  const port = wanted === 0 ? await freePort() : wanted;
  const host = base.WORKER_METRICS_HOST || '127.0.0.1';
  // A wildcard bind is reached on loopback; an IPv6 address goes in brackets.
  const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const include = [`http://${reach}:${port}/metrics`, base.METRICS_INCLUDE_URLS].filter(Boolean).join(',');
  return { WORKER_METRICS_PORT: String(port), METRICS_INCLUDE_URLS: include };
}
