// The service's configuration: one zod schema over the environment, parsed by
// loadConfig(env) from entry points (never at import time), with a comment per
// variable. The configuration table of docs/configuration.md mirrors this file.
import path from 'node:path';
import { z } from 'zod';
import { parsePayloadKeys, PayloadKeysError } from './codec/keys';
import { AllowlistError, parseAllowlist } from './outbound/policy';
import { BUILTIN_TOOL_CHOICES, expandToolGroups } from '../../workflows/tool-registry';
import { checkWebSearch, webVariables } from './web-config';
import { consoleVariables } from './console-config';
import { versioningVariables } from './versioning-config';
import { approvalVariables } from './approval-config';
import { isApiVersion, LATEST_VERSION, VERSION_NAMES, type ApiVersionName } from './api-versions';

const int = (dflt: number) => z.coerce.number().int().nonnegative().default(dflt);

/** Price per million tokens, per model: {"gpt-4o": {"input": 2.5, "output": 10}}. */
const priceTable = z.record(
  z.string(),
  z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }),
);

/** Comma-separated list; blanks dropped. */
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** Browser origins (scheme://host[:port]), comma-separated. */
const origins = (dflt: string) =>
  z
    .string()
    .default(dflt)
    .transform((s, ctx) => {
      const out = list(s);
      for (const o of out) {
        let origin: string | undefined;
        try {
          origin = new URL(o).origin;
        } catch {
          origin = undefined;
        }
        if (origin !== o)
          ctx.addIssue({
            code: 'custom',
            message: `"${o}" is not an origin like http://localhost:8233 (scheme, host, optional port; no path or trailing slash)`,
          });
      }
      return out;
    });

/** When a version was marked deprecated and, if set, when it stops being served (midnight UTC). */
export interface Deprecation {
  deprecatedAt: Date;
  sunsetAt?: Date;
}

/** `version:deprecated-on[:sunset-on]`, comma-separated, dates YYYY-MM-DD: each version known, a sunset after its deprecation. */
const deprecations = z
  .string()
  .default('')
  .transform((s, ctx) => {
    const out: Partial<Record<ApiVersionName, Deprecation>> = {};
    // A day of the calendar: Date would read 2027-02-30 as March 2nd.
    const day = (d: string | undefined) => {
      const at = /^\d{4}-\d{2}-\d{2}$/.test(d ?? '') ? new Date(`${d}T00:00:00Z`) : undefined;
      return at && !Number.isNaN(at.getTime()) && at.toISOString().startsWith(d!) ? at : undefined;
    };
    for (const entry of list(s)) {
      const [version, deprecated, sunset, ...rest] = entry.split(':');
      const deprecatedAt = day(deprecated);
      const sunsetAt = sunset === undefined ? undefined : day(sunset);
      if (!isApiVersion(version))
        ctx.addIssue({
          code: 'custom',
          message: `"${entry}": ${version} is not a version of this service (${VERSION_NAMES.join(', ')})`,
        });
      else if (!deprecatedAt || (sunset !== undefined && !sunsetAt) || rest.length)
        ctx.addIssue({
          code: 'custom',
          message: `"${entry}" is not version:YYYY-MM-DD[:YYYY-MM-DD] (deprecated on, sunset on)`,
        });
      else if (sunsetAt && sunsetAt <= deprecatedAt)
        ctx.addIssue({ code: 'custom', message: `"${entry}": the sunset comes after the deprecation` });
      else out[version] = { deprecatedAt, ...(sunsetAt && { sunsetAt }) };
    }
    return out;
  });

const jsonOf = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((s, ctx) => {
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

export const envSchema = z.object({
  /** HTTP port of the gateway. */
  PORT: int(8080),
  /**
   * The API version (docs/api.md, "Versions") a request that sends no API-Version
   * header gets: this deployment's pin, so that a newer release of the service
   * changes nothing its clients read until the operator moves it. Default: the
   * newest version.
   */
  API_VERSION: z
    .string()
    .default(LATEST_VERSION)
    .refine(isApiVersion, { message: `one of this service's versions: ${VERSION_NAMES.join(', ')}` }),
  /**
   * Versions marked deprecated, comma-separated `version:deprecated-on[:sunset-on]`
   * (dates YYYY-MM-DD, UTC): their answers carry `Deprecation` (RFC 9745) and,
   * with a sunset, `Sunset` (RFC 8594). Unset: none.
   */
  API_VERSION_DEPRECATIONS: deprecations,
  /** Address the gateway binds. */
  HOST: z.string().default('127.0.0.1'),
  /** Comma-separated `key:account` pairs that bootstrap accounts at start (besides the accounts CLI). */
  API_KEYS: z.string().default(''),
  /** Temporal frontend, host:port. Set for `npm start`: use that server and start no engine. */
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  /**
   * The engine `npm start` runs when TEMPORAL_ADDRESS is not set: `temporal-cli` (the
   * official Temporal dev server with its Web UI, installed into .tools/ on first use)
   * or `embedded` (ours, needs nothing beyond npm). Unset: `npm start` runs the dev
   * server, unless its data folder holds only the embedded engine's runs or the CLI
   * cannot be installed (src/dev/launcher/engine-choice.ts); the tests run embedded.
   */
  ENGINE: z.enum(['embedded', 'temporal-cli']).default('embedded'),
  /** Port of the engine `npm start` runs (the gRPC frontend). */
  TEMPORAL_PORT: int(7233),
  /** Web UI port of ENGINE=temporal-cli under `npm start`. */
  TEMPORAL_UI_PORT: int(8233),
  /** Temporal namespace for all of the service's workflows. */
  TEMPORAL_NAMESPACE: z.string().default('default'),
  /** Task queue the worker polls and the gateway starts workflows on. */
  TEMPORAL_TASK_QUEUE: z.string().default('agent-tasks'),
  /** gRPC compression of the worker's Temporal calls: gzip saves bandwidth to a remote cluster; none saves CPU on loopback. */
  TEMPORAL_GRPC_COMPRESSION: z.enum(['gzip', 'none']).default('gzip'),
  /** Redis used as event relay and cache (never as the source of truth). */
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** API key of the OpenAI-compatible model provider. Unset = the built-in scripted model (offline). */
  OPENAI_API_KEY: z.string().optional(),
  /** Base URL of the OpenAI-compatible provider (e.g. https://api.openai.com/v1). */
  OPENAI_BASE_URL: z.string().optional(),
  /** Model used in `flash` mode (simple tasks; thinking visible). */
  MODEL_FLASH: z.string().default('gpt-4o-mini'),
  /** Model used in `base` mode (the default). */
  MODEL_BASE: z.string().default('gpt-4o'),
  /** Model used in `max` mode (complex reasoning). */
  MODEL_MAX: z.string().default('o3'),
  /** JSON price table, USD per million tokens per model; unknown models cost 0. */
  MODEL_PRICES: jsonOf(priceTable).default({
    'gpt-4o-mini': { input: 0.15, output: 0.6 },
    'gpt-4o': { input: 2.5, output: 10 },
    o3: { input: 2, output: 8 },
    // The offline scripted model is priced like small real models so costs show up in demos and tests.
    'scripted-flash': { input: 0.15, output: 0.6 },
    'scripted-base': { input: 2.5, output: 10 },
    'scripted-max': { input: 2, output: 8 },
  }),
  /**
   * Largest model turn (answer, reasoning and tool-call arguments, as the JSON
   * the model activity returns), bytes; a bigger one fails the run with
   * agent_error `answer_too_large` instead of failing its activity on every
   * retry: Temporal refuses any payload over 2 MiB. At most 960 KiB, because
   * the run's result carries the answer twice (`output` and its agent_response
   * event), both in that one payload, and a run's history holds it four times
   * (a one-turn history then stays under gRPC's 4 MiB message). The default
   * leaves half of the result to its other events (earlier turns' texts).
   */
  MODEL_ANSWER_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(960 * 1024)
    .default(512 * 1024),
  /**
   * A model or tool call that stops heartbeating this long (they beat every second) is presumed
   * lost with its worker and retried: a crashed worker's tasks go on elsewhere within about 10 s.
   */
  MODEL_HEARTBEAT_TIMEOUT_MS: int(8_000),
  /**
   * How long a model turn keeps retrying a provider that is down (connection
   * errors, 429, 5xx, no response) before the task fails with agent_error
   * `model_unavailable`, ms. Meanwhile the stream gets `agent_retry` events and
   * the task view shows `attempt` and `last_error`.
   */
  MODEL_UNAVAILABLE_AFTER_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Longest wait for the provider's response to begin (its headers; a streamed answer may then take long), ms. */
  MODEL_RESPONSE_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  /**
   * Longest silence of the provider once its streamed answer has begun (between two pieces), ms:
   * past it the attempt fails as retryable (agent_retry), like a provider that is down.
   */
  MODEL_STREAM_IDLE_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Default cap of running background tasks per account; more wait as `queued` (FIFO). */
  MAX_RUNNING_TASKS_PER_ACCOUNT: int(50),
  /**
   * How often a session checks that its active run still exists, the account
   * slots that their holders do, and an idle callback delivery workflow that its
   * task does (a run terminated from outside never hands its turn or slot back,
   * nor sends its end, itself), ms.
   */
  RUN_WATCH_MS: z.coerce.number().int().min(100).default(60_000),
  /** Model turns a run may take when the request gives no max_steps. */
  MAX_STEPS_DEFAULT: z.coerce.number().int().min(1).default(25),
  /** Largest max_steps a request may ask for (400 beyond). */
  MAX_STEPS_CEILING: z.coerce.number().int().min(1).default(1000),
  /** The longest a run's agent may work when the request gives no max_duration, seconds; 0 = no limit. */
  MAX_DURATION_DEFAULT: int(0),
  /**
   * Built-in tools a run's model is offered when its request names none (`tools`), comma-separated,
   * or `none`: current_time, calculate, wait, the session's computer (`computer` = bash,
   * str_replace_editor, glob, grep), the web (`web` = web_fetch, and web_search where
   * WEB_SEARCH_PROVIDER is set) and a headless browser (`browser` = browser_navigate,
   * browser_snapshot, browser_click, ...); or each by name. A request may pick among these only.
   */
  BUILTIN_TOOLS: z
    .string()
    .default('current_time,calculate,wait,computer,web,browser')
    .transform((s) =>
      s.trim() === 'none'
        ? []
        : s
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
    )
    .pipe(z.array(z.enum(BUILTIN_TOOL_CHOICES)))
    .transform(expandToolGroups),
  /** A tool result longer than this many characters reaches the model (and history) cut, with a note saying so. */
  TOOL_RESULT_MAX_CHARS: z.coerce
    .number()
    .int()
    .min(256)
    .max(512 * 1024)
    .default(64 * 1024),
  /**
   * A session with no run for this long closes; its thread is kept as the
   * closed workflow's result and the next run of the session reopens it.
   * 0 = sessions never close (they then never expire either).
   */
  SESSION_IDLE_CLOSE_MS: int(30 * 60_000),
  /**
   * The same for a session the service opens for a keyed request that named none (its id in the
   * answer; an unkeyed one opens none until used: src/common/sessions/lazy-sessions.ts): most such
   * sessions are never continued, and an open one holds a workflow in the engine and in the
   * worker's cache. A later run of it reopens it, as any closed session, with
   * SESSION_IDLE_CLOSE_MS from then on. Never longer than SESSION_IDLE_CLOSE_MS (with 0 there, such
   * sessions never close either); 0 = SESSION_IDLE_CLOSE_MS.
   */
  ONE_OFF_SESSION_IDLE_CLOSE_MS: int(60_000),
  /**
   * Largest accepted request body, bytes (413 beyond). At most 1.5 MiB: the
   * message becomes a workflow input, and Temporal refuses any payload over
   * its 2 MiB blob limit (a bigger body would fail its workflow start); the
   * rest is headroom for the run's other fields and the encryption envelope.
   */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1.5 * 1024 * 1024)
    .default(1024 * 1024),
  /** Finished tasks, results and event logs expire after this many days (Redis and Temporal). */
  RETENTION_DAYS: int(7),
  /**
   * `npm start`'s embedded engine, with its data folder: how many closed runs it keeps in memory
   * before the oldest move to its archive file (read back on demand). Bounds the engine's memory
   * of finished work; the rest of the RETENTION_DAYS are on disk.
   */
  ENGINE_MAX_CLOSED_IN_MEMORY: int(1000),
  /** Where API keys come from: `temporal` (accounts registry workflow, managed by the CLI) or `env` (API_KEYS only). */
  API_KEYS_SOURCE: z.enum(['temporal', 'env']).default('temporal'),
  /** Idle SSE streams get a comment line this often, so proxies keep them open. */
  SSE_HEARTBEAT_MS: int(15_000),
  /** Data folder of the single-machine start (embedded engine log, Redis dump, payload key file). */
  DATA_DIR: z.string().default('.data'),
  /**
   * Where sessions' workspaces (the agent's computer: its files) live; default DATA_DIR/workspaces.
   * Workers and gateways must all see the same folder (docs/computer.md, "Several workers").
   */
  WORKSPACE_DIR: z.string().optional(),
  /** A session's workspace may hold this many bytes; a write beyond is a tool error or a 413. */
  WORKSPACE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(1024 * 1024 * 1024),
  /** A session's workspace may hold this many files. */
  WORKSPACE_MAX_FILES: z.coerce.number().int().min(10).default(10_000),
  /** A `bash` call's time limit when the model gives none, seconds. */
  BASH_TIMEOUT_DEFAULT_S: z.coerce.number().int().min(1).default(120),
  /** Longest time limit a `bash` call may ask for, seconds. */
  BASH_TIMEOUT_MAX_S: z.coerce.number().int().min(1).default(600),
  /** Memory of one sandboxed command and its processes, MiB (killed beyond). */
  SANDBOX_MEMORY_MB: z.coerce.number().int().min(64).default(1024),
  /** Processes (and threads) one sandboxed command may have at once. */
  SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(8).default(256),
  /** CPU time one sandboxed command may use, seconds. */
  SANDBOX_CPU_SECONDS: z.coerce.number().int().min(1).default(600),
  /** Output one sandboxed command may write (stdout and stderr together), bytes: killed beyond. */
  SANDBOX_MAX_OUTPUT_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(64 * 1024 * 1024),
  /**
   * Whether a run may give its commands network (request `computer.network`): `request` (a run
   * asks; none by default) or `off` (never). The network a command gets goes through the outbound
   * policy only (OUTBOUND_ALLOWLIST): docs/computer.md, "Network".
   */
  SANDBOX_NETWORK: z.enum(['off', 'request']).default('request'),
  /** The web tools and the browser: WEB_FETCH_*, WEB_USER_AGENT, WEB_SEARCH_*, BROWSER_* (web-config.ts). */
  ...webVariables,
  /** The deployment's approval gates: APPROVAL_REQUIRED_TOOLS, APPROVAL_TIMEOUT_S (approval-config.ts). */
  ...approvalVariables,
  /** Worker versioning: WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID (versioning-config.ts). */
  ...versioningVariables,
  /** The web console: CONSOLE, TEMPORAL_UI_URL (console-config.ts). */
  ...consoleVariables,
  /** Each of a `bash` call's stdout and stderr reaches the model cut to this many bytes (the rest stays in the workspace). */
  BASH_OUTPUT_MODEL_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(30 * 1024),
  /**
   * Payload encryption keys, `id:base64key,...` (32-byte AES-256 keys): the
   * first encrypts, all decrypt (rotation: put the new key first). Unset: the
   * key file DATA_DIR/payload-keys that `npm start` creates, else the gateway,
   * worker and CLIs refuse to start (src/common/codec/data-converter.ts).
   */
  PAYLOAD_KEYS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined) return;
      try {
        parsePayloadKeys(v);
      } catch (err) {
        if (!(err instanceof PayloadKeysError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
      }
    }),
  /**
   * Operator token of the gateway's remote codec endpoint (/codec/encode,
   * /codec/decode: the Temporal Web UI and CLI decrypt payloads through it).
   * Unset = the endpoint is off (404). Its characters are URL-safe because
   * the Web UI, which cannot send a header, carries it in the path.
   */
  CODEC_AUTH_TOKEN: z
    .string()
    .regex(
      /^[A-Za-z0-9._~-]{16,}$/,
      'must be at least 16 characters of A-Z a-z 0-9 . _ ~ - (e.g. openssl rand -hex 32)',
    )
    .optional(),
  /** Browser origins allowed to call the codec endpoint (CORS): the Temporal Web UI's. */
  CODEC_CORS_ORIGINS: origins('http://localhost:8233,http://127.0.0.1:8233'),
  /**
   * CPU priority (nice, 0-19) the worker gives its own threads, all but the
   * token thread (model streams and their relay writes), so API requests and
   * streamed tokens go first when agents' work keeps shared cores busy (the
   * worker still gets every idle cycle). 0 = leave the priority alone.
   * Above 0 the worker also turns off V8's parallel young-generation
   * collection: its helper threads are lowered too (thread-priority.ts).
   * A worker on a machine of its own gains nothing from either: set 0 there.
   */
  WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Workflow runs the worker keeps in memory between their workflow tasks (the
   * SDK's sticky cache). Every open task and session counts; an evicted run
   * replays its whole history on its next task or query.
   */
  WORKER_CACHED_WORKFLOWS: z.coerce.number().int().min(10).max(100_000).default(4000),
  /**
   * Frames a stack trace made in the worker's workflow thread keeps (V8's
   * stack trace limit there; Node's default is 10). The SDK captures one for
   * every promise a workflow makes, for the Web UI's Stack Trace tab, and
   * that capture was the largest cost of a run in the worker. The first frame
   * of each is the SDK's own: 5 shows four frames of workflow code per pending
   * promise; 1 or 0 leave the tab empty. A workflow's failure keeps 5 frames.
   */
  WORKFLOW_STACK_TRACE_LIMIT: z.coerce.number().int().min(0).max(100).default(5),
  /**
   * Hosts, IP addresses and CIDR ranges (comma-separated) that outbound calls
   * made on a user's behalf (MCP servers, later callbacks) may reach although
   * they are loopback, private, link-local or unique-local, e.g.
   * `127.0.0.1,10.20.0.0/16,mcp.internal`. Empty: only public addresses.
   */
  OUTBOUND_ALLOWLIST: z
    .string()
    .default('')
    .superRefine((v, ctx) => {
      try {
        parseAllowlist(v);
      } catch (err) {
        if (!(err instanceof AllowlistError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
      }
    }),
  /** Longest MCP tool call, ms (the activity's start-to-close timeout; a slower call is an error result for the model). */
  /**
   * Waits before each retry of a callback delivery, comma-separated (ms, s, m,
   * h); a delivery is tried once more than there are waits, then recorded as
   * failed. Each wait varies by up to 10% either way.
   */
  CALLBACK_RETRY_DELAYS: z
    .string()
    .default('5s,5m,30m,2h,5h,10h,14h,20h,24h')
    .transform((v, ctx) => {
      const ms = v.split(',').map((d) => durationMs(d.trim()));
      if (ms.some((n) => n === undefined))
        ctx.addIssue({ code: 'custom', message: 'a comma-separated list of durations like 5s,5m,2h' });
      return ms as number[];
    }),
  /** Longest wait for a callback receiver's answer, per attempt, ms; a timeout is retried like a 5xx. */
  CALLBACK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  MCP_CALL_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(5 * 60_000),
  /** Connecting to an MCP server and listing its tools, per attempt, ms. */
  MCP_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * Folder of the datastores' files: uploaded SQLite databases and the documents
   * datastores' knowledge bases. Default DATA_DIR/datastores. The gateway writes
   * it and the worker reads it: on several machines, a shared volume.
   */
  DATASTORE_DIR: z.string().optional(),
  /** Folder whose SQLite files accounts may register by path (type sqlite, path); unset = uploads only. */
  DATASTORE_SQLITE_ROOT: z.string().optional(),
  /** A datastore query's time limit, ms: the database cancels the statement past it (a registration may set its own). */
  DATASTORE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(5000),
  /**
   * Datastores the worker keeps open at once, of each kind (SQL sources: a PostgreSQL pool or a
   * SQLite thread each; knowledge bases: an open file each). Past it the least recently used is
   * closed, once the longest query it could still be running has had its time.
   */
  DATASTORE_MAX_OPEN: z.coerce.number().int().min(1).max(10_000).default(64),
  /** Rows a datastore query gives the agent at most; the result says when it was cut (a registration may set its own). */
  DATASTORE_MAX_ROWS: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Largest SQLite upload or document added to a documents datastore, bytes (413 beyond). */
  DATASTORE_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(50 * 1024 * 1024),
  /**
   * How long a stopping gateway (SIGTERM, SIGINT) gives the requests in flight to be
   * answered, ms; its SSE streams end at once (their clients resume with Last-Event-ID).
   */
  GATEWAY_DRAIN_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * `npm start`: restarts of one process within a minute before the launcher
   * gives up, stops everything and exits 1 (for an outer supervisor to act on).
   * 0 = no restarts: the first process that dies stops everything.
   */
  SUPERVISE_MAX_RESTARTS: z.coerce.number().int().min(0).default(5),
  /**
   * Bearer token the gateway's GET /metrics asks for (and the worker's metrics
   * endpoint, which the gateway then calls with it). Unset = /metrics is open,
   * like /healthz: keep it off the public network then.
   */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 32)').optional(),
  /**
   * Other processes' metrics endpoints, comma-separated URLs, whose text the
   * gateway's /metrics includes (fetched at each scrape, 1 s at most each; one
   * that fails is left out, marked by aes_metrics_include_up 0). `npm start`
   * adds its worker's.
   */
  METRICS_INCLUDE_URLS: z
    .string()
    .default('')
    .transform((s, ctx) => {
      const urls = list(s);
      for (const u of urls)
        if (!/^https?:\/\/[^/]/.test(u))
          ctx.addIssue({
            code: 'custom',
            message: 'must be comma-separated http(s) URLs, e.g. http://127.0.0.1:9464/metrics',
          });
      return urls;
    }),
  /**
   * Port of the worker's Prometheus endpoint (GET /metrics); 0 = none (the
   * default of `npm run worker`). `npm start` serves it on 9464 unless set,
   * and has the gateway's /metrics include it.
   */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Address the worker's metrics endpoint binds (0.0.0.0 for a Prometheus on another machine). */
  WORKER_METRICS_HOST: z.string().default('127.0.0.1'),
  /** pino log level. */
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /**
   * How log lines look: `pretty` (one readable line per record) or `json` (one
   * JSON object per line, for log shippers). Under `npm start` the processes
   * hand the launcher JSON and it prints them in this format, prefixed by process.
   */
  LOG_FORMAT: z.enum(['pretty', 'json']).default('pretty'),
  /**
   * OTLP/HTTP collector (Jaeger, Tempo, an OpenTelemetry collector), e.g.
   * http://127.0.0.1:4318: the gateway and the worker export their traces there
   * (to its /v1/traces). Unset = no tracing at all. The exporter also reads the
   * other standard OTEL_EXPORTER_OTLP_* and OTEL_BSP_* variables itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** Service name on exported spans; default `aes-gateway` and `aes-worker` by process. */
  OTEL_SERVICE_NAME: z.string().optional(),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(`invalid configuration: ${issues.map((i) => `${i.variable}: ${i.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment. Throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "not set", as shells tend to export them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '?'), message: i.message })));
  }
  const { config, issues } = checkWebSearch(parsed.data, cleaned.BUILTIN_TOOLS);
  if (issues.length) throw new ConfigError(issues);
  return config;
}

/** Variables whose values must never be logged. */
export const SECRET_VARIABLES = [
  'OPENAI_API_KEY',
  'API_KEYS',
  'PAYLOAD_KEYS',
  'CODEC_AUTH_TOKEN',
  'METRICS_TOKEN',
  'WEB_SEARCH_API_KEY',
] as const;

/** Where sessions' workspaces live (WORKSPACE_DIR, else DATA_DIR/workspaces). */
export function workspaceDir(config: Pick<Config, 'WORKSPACE_DIR' | 'DATA_DIR'>): string {
  return config.WORKSPACE_DIR ?? path.join(config.DATA_DIR, 'workspaces');
}

/** Where datastore files live (DATASTORE_DIR, else DATA_DIR/datastores). */
export function datastoreDir(config: Pick<Config, 'DATASTORE_DIR' | 'DATA_DIR'>): string {
  return config.DATASTORE_DIR ?? path.join(config.DATA_DIR, 'datastores');
}

/** The model a run of this mode uses. */
export function modelForMode(
  config: Pick<Config, 'MODEL_FLASH' | 'MODEL_BASE' | 'MODEL_MAX'>,
  mode: 'flash' | 'base' | 'max',
): string {
  return { flash: config.MODEL_FLASH, base: config.MODEL_BASE, max: config.MODEL_MAX }[mode];
}

/** "250ms", "5s", "5m", "2h" or a bare number of ms; undefined when it is none of these. */
function durationMs(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * unit);
}
