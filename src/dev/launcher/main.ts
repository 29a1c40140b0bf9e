// `npm start`: the whole service on one machine, with a banner saying what runs
// where. Ctrl-C stops everything; the next start resumes unfinished tasks.
import path from 'node:path';
import { startStack, Stack } from './stack';
import { ROOT } from './processes';
import { engineFromEnv } from './engines';
import { chooseStartEngine } from './engine-choice';
import { envSchema } from '../../common/config';
import { DEMO_MCP_TOOLS } from '../demo-mcp/server';
import { ChildLogs } from './child-logs';
import { firstTakenPort, launcherWorkerMetricsPort } from './ports';
import { superviseStack } from './supervise-stack';
import { showUrl } from '../../common/outbound/policy';
import { buildConsole } from '../../../console/build';

async function main(): Promise<void> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const dataDir = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
  // The engine first: the ports it needs (the Web UI's with the dev server) depend on it.
  const choice = process.env.TEMPORAL_ADDRESS ? undefined : chooseStartEngine(process.env, dataDir, say);
  if (choice) process.env.ENGINE = choice.engine;
  // Nothing starts while a port it needs is taken (the engine's, above all: a banner against another server would be a lie).
  const taken = await firstTakenPort(process.env);
  if (taken) {
    process.stderr.write(`npm start: ${taken}\n`);
    process.exit(1);
  }
  say('starting the Agent Execution Service (single machine)...');
  // The web console the gateway serves at /console: built once, again only when its sources change.
  const built = await buildConsole().catch((err: Error) => {
    say(`  the web console could not be built (${err.message}): /console will answer 404`);
    return undefined;
  });
  if (built?.built) say('  built the web console (console/dist)');
  const engine = engineFromEnv(process.env);
  const uiPort =
    engine === 'temporal-cli'
      ? envSchema.shape.TEMPORAL_UI_PORT.parse(process.env.TEMPORAL_UI_PORT || undefined)
      : undefined;
  const format = envSchema.shape.LOG_FORMAT.parse(process.env.LOG_FORMAT || undefined);
  const childLogs = new ChildLogs({
    dir: path.join(dataDir, 'logs'),
    show: say,
    format,
    color: process.stdout.isTTY === true && !process.env.NO_COLOR,
    fileOnly: ['redis'],
  });
  // The worker's metrics endpoint (0: none); the gateway's /metrics includes it.
  const workerMetricsPort = launcherWorkerMetricsPort(process.env) || undefined;
  const stack = await startStack({
    dataDir,
    temporalUiPort: uiPort,
    workerMetricsPort,
    log: (s) => say(`  ${s}`),
    childLogs,
  });
  showBanner(say, stack, { note: choice?.note, dataDir, workerMetricsPort });
  superviseUntilStopped(say, stack, childLogs);
}

/** What runs where, and how to try it. */
function showBanner(
  say: (s: string) => void,
  stack: Stack,
  o: { note?: string; dataDir: string; workerMetricsPort?: number },
): void {
  const { dataDir, workerMetricsPort } = o;
  const line = '-'.repeat(72);
  say(line);
  say(`  Agent Execution Service ready: ${stack.gatewayUrl}`);
  say(`  Temporal: ${stack.temporalAddress} (${engineLine(stack)})    Redis: ${stack.redisUrl}`);
  if (o.note) say(`  (${o.note})`);
  say(`  Console: ${stack.gatewayUrl}/console (sign in with an API key)`);
  say(`  Web UI: ${uiLine(stack)}`);
  if (stack.temporalUiUrl && stack.env.CODEC_AUTH_TOKEN) {
    say(
      `  temporal CLI: temporal workflow show -w <task_id> --address ${stack.temporalAddress} --codec-endpoint ${stack.gatewayUrl}/codec --codec-auth "Bearer ${stack.env.CODEC_AUTH_TOKEN}"`,
    );
  }
  say(`  Model: ${modelLine(stack)}`);
  say(
    `  Metrics: ${stack.gatewayUrl}/metrics (Prometheus text${workerMetricsPort ? `, the worker's included from port ${stack.env.WORKER_METRICS_PORT}` : ''}${stack.env.METRICS_TOKEN ? '; needs METRICS_TOKEN' : ''})`,
  );
  say(
    `  Logs: ${path.relative(process.cwd(), path.join(dataDir, 'logs')) || '.'}/<process>.log (LOG_LEVEL, LOG_FORMAT=pretty|json)`,
  );
  say(`  Payloads in Temporal: encrypted (AES-256-GCM), ${keysLine(stack)}`);
  if (stack.devKey) say(`  API key: ${stack.devKey} (account "dev"; set API_KEYS to use your own)`);
  say(
    `  try: curl -s ${stack.gatewayUrl}/ -H 'Authorization: Bearer ${stack.devKey ?? '<key>'}' -H 'Content-Type: application/json' -d '{"message":"hello"}'`,
  );
  if (stack.demoMcpUrl) {
    say(`  MCP: demo tool server ${stack.demoMcpUrl} (${DEMO_MCP_TOOLS.join(', ')}; DEMO_MCP=false turns it off)`);
    const body = JSON.stringify({
      message: '[[tool name=demo__add args={"a":2,"b":40}]] add 2 and 40',
      mcp_servers: [{ serverName: 'demo', serverUrl: stack.demoMcpUrl }],
    });
    say(
      `  try a tool loop: curl -s ${stack.gatewayUrl}/ -H 'Authorization: Bearer ${stack.devKey ?? '<key>'}' -H 'Content-Type: application/json' -d '${body}'`,
    );
  }
  if (stack.demoWebUrl)
    say(`  Web: demo site ${stack.demoWebUrl}, searched by web_search (DEMO_WEB=false turns it off)`);
  else if (!stack.env.WEB_SEARCH_PROVIDER)
    say('  Web: web_fetch only; set WEB_SEARCH_PROVIDER (searxng, brave, tavily) for web_search (docs/web.md)');
  say(line);
}

/**
 * A process that dies or freezes is started again; the others go on (src/dev/launcher/supervisor.ts).
 * Ctrl-C, or the supervisor giving up, stops everything.
 */
function superviseUntilStopped(say: (s: string) => void, stack: Stack, childLogs: ChildLogs): void {
  const maxRestarts = envSchema.shape.SUPERVISE_MAX_RESTARTS.parse(process.env.SUPERVISE_MAX_RESTARTS || undefined);
  const supervised = superviseStack(stack, { log: (s) => say(`npm start: ${s}`), maxRestarts });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping...');
    await supervised.close();
    await stack.stop();
    say('stopped');
    await childLogs.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  void supervised.supervisor.gaveUp.then((reason) => {
    process.stderr.write(`npm start: ${reason}; stopping everything\n`);
    void stop(1);
  });
}

function modelLine(stack: Stack): string {
  if (stack.modelUrl)
    return `the built-in scripted model at ${stack.modelUrl} (no OPENAI_API_KEY set: canned replies, offline)`;
  const env = process.env;
  const model = (k: 'MODEL_FLASH' | 'MODEL_BASE' | 'MODEL_MAX') => envSchema.shape[k].parse(env[k] || undefined);
  const base = env.OPENAI_BASE_URL ? shownBaseUrl(env.OPENAI_BASE_URL) : 'https://api.openai.com/v1 (OpenAI)';
  return `${model('MODEL_FLASH')} (flash), ${model('MODEL_BASE')} (base), ${model('MODEL_MAX')} (max) at ${base}`;
}

/** The base URL without credentials or query (either could hold a secret). */
function shownBaseUrl(raw: string): string {
  try {
    return showUrl(new URL(raw));
  } catch {
    return 'OPENAI_BASE_URL (not a valid URL)';
  }
}

function engineLine(stack: Stack): string {
  if (!stack.engine) return 'TEMPORAL_ADDRESS: a server started elsewhere';
  return stack.engine === 'embedded'
    ? 'ENGINE=embedded, our embedded engine'
    : 'ENGINE=temporal-cli, the official Temporal dev server';
}

function keysLine(stack: Stack): string {
  const k = stack.payloadKeys;
  if (k.source === 'file') return `key in ${path.relative(process.cwd(), k.file) || k.file} (keep it with the data)`;
  return k.source === 'PAYLOAD_KEYS' ? 'keys from PAYLOAD_KEYS' : 'a key for this run only';
}

function uiLine(stack: Stack): string {
  if (stack.temporalUiUrl)
    return `${stack.temporalUiUrl} (payloads readable: it decodes them through the gateway's /codec endpoint, its token set up already)`;
  if (stack.engine === 'embedded')
    return 'none with the embedded engine; ENGINE=temporal-cli npm start gives the Temporal Web UI';
  return "your Temporal server's own";
}

main().catch((err) => {
  process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
