/**
 * `npm run bench`: latency, relay overhead and memory of the whole service on
 * this machine, against the targets it must meet. `npm run bench -- --help`
 * lists the options; docs/benchmarks.md says what each row means.
 *
 * This file is the runner: its flags (every size a flag, --name value or
 * --name=value, with a BENCH_NAME environment equivalent; flags win), the
 * phases in the order they run, and the run itself: it starts the stack
 * (stack.ts), runs the phases (requests, relay, tools, dag, computer, web, console, load: a file each),
 * prints the report (report.ts) and stops everything it started. The express
 * and soak phases run without the stack (`npm run bench:express`, `bench:soak`).
 */
import fs from 'node:fs';
import os from 'node:os';
import { readFlags } from '../packages/embedded-temporal/bench/bench-flags';
import { computerPhase } from './computer';
import { dagPhase } from './dag';
import { loadPhase, soakPhase } from './load';
import { capacityPhase } from './capacity';
import { CpuMeter, cpuProbeMs, monotonicUs } from './measure';
import { relayPhase } from './relay';
import { printProfiles, printReport, type Report } from './report';
import { resultPhase, statusAndBaseline, statusLoadPhase, submitPhases, ttfePhase } from './requests';
import { expressPhase } from './servers';
import { Bench } from './stack';
import { datastoresPhase, mcpPhase } from './tools';
import { browserPhase, webPhase } from './web';
import { consolePhase } from './console';
import { costPhase } from './cost';

export const PHASES = [
  'submit',
  'isolated',
  'status',
  'status-load',
  'result',
  'baseline',
  'ttfe',
  'relay',
  'mcp',
  'dag',
  'datastores',
  'computer',
  'web',
  'browser',
  'console',
  'cost',
  'load',
  'express',
  'soak',
  'capacity',
] as const;
export type Phase = (typeof PHASES)[number];
/** Phases that need no stack of the bench's own: they run alone (the stack is not started). */
const STANDALONE: readonly Phase[] = ['express', 'soak', 'capacity'];
/** 'isolated' (submits with the worker stopped) is a diagnostic: opt-in; express and soak are runs of their own. */
const DEFAULT_PHASES: Phase[] = PHASES.filter((p) => p !== 'isolated' && !STANDALONE.includes(p));

export interface BenchOptions {
  /** Client counts of the latency phases (each a closed loop, no think time), ascending. */
  concurrency: number[];
  warmup: number;
  warmupReads: number;
  submit: number;
  submitPaced: number;
  /** Rates (submits per second) of the paced submit rows, ascending. */
  submitRates: number[];
  status: number;
  /** Background tasks that complete around the status-under-load row. */
  statusLoadTasks: number;
  resultRepeat: number;
  baseline: number;
  ttfe: number;
  relayTasks: number;
  relayTokens: number;
  relayDelayMs: number;
  /** Split each relay token's time at Redis pub/sub (worker hop, gateway hop); adds an observer, so off by default. */
  relayHops: boolean;
  /** MCP tool calls measured through runs (and as many direct calls and floor rounds). */
  mcpCalls: number;
  /** Runs of the 20-step DAG timed (after one warm-up run), each followed by a floor chain. */
  dagRuns: number;
  /** Runs of one named-query datastore call timed (after one warm-up run). */
  datastoreRuns: number;
  /** bash tool calls timed through runs (20 per run), and as many bare sandbox spawns, bare bwrap spawns and floor rounds. */
  computerCalls: number;
  /** Runs of one web_fetch call timed (after one warm-up run), each followed by a direct fetch of the page. */
  webRuns: number;
  /** Cold loads of the web console in Chromium (after one warm-up). */
  consoleLoads: number;
  /** One-turn background tasks per burst of the cost phase, bursts, and the clients submitting them. */
  costRuns: number;
  costBursts: number;
  costClients: number;
  /** Seconds the cost phase waits after its last burst before reading memory again (0: not again). */
  costSettleS: number;
  loadTasks: number;
  loadSse: number;
  loadTokens: number;
  loadDelayMs: number;
  loadConcurrency: number;
  loadAccounts: number;
  loadTimeoutS: number;
  /** The express phase: requests per row, and rounds (each server at 1 and 8 clients). */
  expressRequests: number;
  expressRounds: number;
  /** The soak phase: the service it checks (URL, API key), waves, tasks per wave, clients, pause after a wave. */
  url: string;
  key: string;
  soakWaves: number;
  soakTasks: number;
  soakClients: number;
  soakSettleMs: number;
  /** The capacity phase: one-turn tasks of its throughput row, and agents of each of its held rows. */
  capacityTasks: number;
  capacityAgents: number;
  timeLimitS: number;
  phases: Set<Phase>;
  /** Engine log and Redis append-only file in a temporary folder, as `npm start` runs. */
  persist: boolean;
  /** Folder for CPU profiles of gateway, worker and engine; unset = no profiling. */
  profileDir?: string;
  jsonOut?: string;
  echoChildren: boolean;
}

export const USAGE = `npm run bench -- [options]

Starts the whole stack (the ENGINE's Temporal engine, embedded by default; a
private redis-server; worker; gateway; the scripted model in this process),
measures, prints a table, stops everything.

  --concurrency A,B      client counts of the latency phases; each phase
                         runs once per count (1 = sequential)           (1,8)
  --warmup N             unmeasured submits before each submit row      (50)
                         (each one is a task the worker then runs)
  --warmup-reads N       unmeasured requests before each read row        (500)
                         (status, baseline, healthz, repeat result)
  --submit N             background submits measured, per count        (500)
                         (a p99 of N samples is its N/100-th worst: 500
                         keeps one slow request from deciding it)
  --submit-paced N       submits per paced row: open loop at a steady rate,
                         the row the submit target is judged on (0 = skip) (300)
  --submit-rate A,B      submits per second of the paced rows; keep them
                         under what the worker can run (the task rate
                         burst line prints it)                       (5,10,20)
  --status N             GET /tasks/{id} measured, per count            (2000)
  --status-load-tasks N  background tasks of each status-load pass: GET
                         /tasks/{id} of them while they run and complete,
                         paced at 2 reads a task a second beside the
                         baseline server, then 8 clients closed-loop    (100)
  --result-repeat N      repeat GET /tasks/{id}/result, per count       (1000)
                         (first reads: the submitted tasks, split over the counts)
  --baseline N           bare Express + Redis GET, and /healthz, per count (2000)
  --ttfe N               POST / with SSE to first data: line, per count  (60)
  --relay-tasks N        streamed tasks for the relay overhead at the
                         highest count (fewer, in proportion, at lower)  (40)
  --relay-tokens N       tokens per relay task                          (40)
  --relay-delay MS       model delay before each token                  (20)
  --relay-hops           also split each token's time at Redis pub/sub
                         (worker hop, gateway hop) with a pattern
                         subscription in this process: an observer the
                         service does not have, which adds its own load
                         to the figures it splits                       (off)
  --mcp-calls N          MCP tool calls timed through runs (20 per run),
                         as many direct SDK calls to the same server, and
                         as many rounds of the floor workflow (bare SDK
                         workflow, two activity hand-offs a round)      (200)
  --dag-runs N           runs of the 20-step DAG timed, after a warm-up,
                         each followed by a floor run (a bare chain of
                         child workflows, as many links as dependent steps) (5)
  --datastore-runs N     runs of one named SQLite query tool call timed,
                         after a warm-up                                (30)
  --computer-calls N     bash tool calls timed through runs (20 per run,
                         each \`date +%s%N\`: tool-call message -> process
                         start), and as many spawns of the same command
                         through the sandbox and through a bare bwrap,
                         and floor rounds (activity returned -> next one
                         started) of the floor workflow                 (200)
  --web-runs N           runs of one web_fetch call of a local page timed,
                         each followed by a direct fetch of it; as many
                         browser_navigate calls in one session          (30)
  --console-loads N      loads of the web console in Chromium, each in a
                         fresh context (nothing cached): its first paint,
                         and sign-in until the tasks list shows; its size (20)
  --cost-runs N          one-turn background tasks per burst of the cost
                         phase, and as many runs of the floor burst after
                         each (bare workflows, one activity calling the
                         model)                                        (300)
  --cost-bursts N        bursts (10 for the soak's memory line)          (3)
  --cost-clients N       clients submitting a burst (all at once)       (300)
  --cost-settle-s N      after the last burst, wait N s and read memory
                         again (sessions closed, caches settled)         (0)
  --load-tasks N         background tasks in the load phase             (1000)
  --load-sse N           SSE clients on GET /tasks/{id}/events           (500)
  --load-tokens N        tokens per load task (streamed to the relay)   (20)
  --load-delay MS        model delay before each load token             (100)
  --load-concurrency N   submit concurrency of the load phase           (64)
  --load-accounts N      accounts the load tasks are spread over; each
                         runs at most MAX_RUNNING_TASKS_PER_ACCOUNT     (10)
  --load-timeout S       give up waiting for load tasks after S         (150)
  --time-limit S         whole run; phases past it are skipped          (600)
  --phases a,b,...       any of ${PHASES.join(',')}
                         (default: all but isolated, a diagnostic that stops
                         the worker to time the submit path alone, and the
                         three that run without the bench's stack, alone:
                         express, soak and capacity)

  express: Express 5 on http.createServer against createExpressServer, two
  servers of its own, the measuring client, their GC pauses
  --express-requests N   requests per row                               (5000)
  --express-rounds N     rounds, each server at 1 and 8 clients          (2)

  soak: waves of one-turn background tasks against a running service (e.g.
  SESSION_IDLE_CLOSE_MS=5000 npm start), throughput and RSS per wave
  --url URL              the service                (http://127.0.0.1:$PORT, 8080)
  --key KEY              its API key                                    (dev-key)
  --soak-waves N         waves                                          (5)
  --soak-tasks N         tasks per wave, on the key's account            (1000)
  --soak-clients N       clients submitting them                        (16)
  --soak-settle-ms MS    pause after a wave's last task, before the RSS  (5000)

  capacity: against a running service (e.g. scripts/cluster.sh up), with
  --url, --key and --soak-clients as for soak: one-turn tasks per second
  and the CPU each kind of process spent; agents waiting in a timer, then
  agents in a model call, and the workers' memory per agent
  --capacity-tasks N     one-turn tasks of the throughput row            (500)
  --capacity-agents N    agents of each held row                         (200)

  --profile DIR          run gateway, worker and engine under the V8 CPU profiler,
                         write profiles to DIR and print top self-time functions
                         (latencies are inflated by the profiler in that run)
  --persist              run the engine and Redis with persistence (engine
                         log with fdatasync, Redis AOF everysec) in a
                         temporary folder, as \`npm start\` does; default:
                         in memory, as the end-to-end tests do
  --json FILE            also write the raw results as JSON
  --echo-children        show the children's output

Environment equivalents: BENCH_CONCURRENCY, BENCH_WARMUP, BENCH_SUBMIT, ... (the
flag name upper-cased, dashes as underscores, BENCH_ prefix).`;

const INT_FLAGS: Record<string, [keyof BenchOptions, number, number]> = {
  warmup: ['warmup', 50, 0],
  'warmup-reads': ['warmupReads', 500, 0],
  submit: ['submit', 500, 1],
  'submit-paced': ['submitPaced', 300, 0],
  status: ['status', 2000, 1],
  'status-load-tasks': ['statusLoadTasks', 100, 1],
  'result-repeat': ['resultRepeat', 1000, 0],
  baseline: ['baseline', 2000, 1],
  ttfe: ['ttfe', 60, 1],
  'relay-tasks': ['relayTasks', 40, 1],
  'relay-tokens': ['relayTokens', 40, 1],
  'relay-delay': ['relayDelayMs', 20, 0],
  'mcp-calls': ['mcpCalls', 200, 1],
  'dag-runs': ['dagRuns', 5, 1],
  'datastore-runs': ['datastoreRuns', 30, 1],
  'computer-calls': ['computerCalls', 200, 1],
  'web-runs': ['webRuns', 30, 1],
  'console-loads': ['consoleLoads', 20, 1],
  'cost-runs': ['costRuns', 300, 1],
  'cost-bursts': ['costBursts', 3, 1],
  'cost-clients': ['costClients', 300, 1],
  'cost-settle-s': ['costSettleS', 0, 0],
  'load-tasks': ['loadTasks', 1000, 1],
  'load-sse': ['loadSse', 500, 0],
  'load-tokens': ['loadTokens', 20, 1],
  'load-delay': ['loadDelayMs', 100, 0],
  'load-concurrency': ['loadConcurrency', 64, 1],
  'load-accounts': ['loadAccounts', 10, 1],
  'load-timeout': ['loadTimeoutS', 150, 10],
  'express-requests': ['expressRequests', 5000, 1],
  'express-rounds': ['expressRounds', 2, 1],
  'soak-waves': ['soakWaves', 5, 1],
  'soak-tasks': ['soakTasks', 1000, 1],
  'soak-clients': ['soakClients', 16, 1],
  'soak-settle-ms': ['soakSettleMs', 5000, 1],
  'capacity-tasks': ['capacityTasks', 500, 1],
  'capacity-agents': ['capacityAgents', 200, 1],
  'time-limit': ['timeLimitS', 600, 30],
};
const STRING_FLAGS = ['concurrency', 'submit-rate', 'phases', 'profile', 'json', 'url', 'key'];
const BOOL_FLAGS = ['echo-children', 'persist', 'relay-hops'];

type StringFlag = 'url' | 'key' | 'profileDir' | 'jsonOut' | 'echoChildren' | 'persist' | 'relayHops';
const envName = (flag: string) => `BENCH_${flag.toUpperCase().replace(/-/g, '_')}`;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const raw: Record<string, string | undefined> = {};
  for (const flag of [...Object.keys(INT_FLAGS), ...STRING_FLAGS, ...BOOL_FLAGS])
    raw[flag] = env[envName(flag)] || undefined;
  readFlags(argv, raw, USAGE, BOOL_FLAGS);
  const opts: Record<string, unknown> = {};
  for (const [flag, [key, dflt, min]] of Object.entries(INT_FLAGS)) {
    const v = raw[flag] === undefined ? dflt : Number(raw[flag]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${flag} must be an integer >= ${min}`);
    opts[key] = v;
  }
  const concurrency = (raw.concurrency ?? '1,8').split(',').map((x) => Number(x.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error('--concurrency must be a list of integers >= 1');
  concurrency.sort((a, b) => a - b);
  const submitRates = (raw['submit-rate'] ?? '5,10,20').split(',').map((x) => Number(x.trim()));
  if (submitRates.some((r) => !(r > 0))) throw new Error('--submit-rate must be a list of positive numbers');
  submitRates.sort((a, b) => a - b);
  const phases = (raw.phases ?? DEFAULT_PHASES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of phases)
    if (!(PHASES as readonly string[]).includes(p)) throw new Error(`unknown phase ${p} (${PHASES.join(', ')})`);
  const alone = phases.filter((p) => STANDALONE.includes(p as Phase));
  if (alone.length && alone.length < phases.length)
    throw new Error(`${alone.join(' and ')} run without the bench's stack: ask for them apart from the other phases`);
  return {
    ...(opts as Omit<BenchOptions, StringFlag | 'concurrency' | 'submitRates' | 'phases'>),
    concurrency,
    submitRates,
    phases: new Set(phases as Phase[]),
    url: raw.url ?? `http://127.0.0.1:${env.PORT ?? 8080}`,
    key: raw.key ?? 'dev-key',
    profileDir: raw.profile,
    jsonOut: raw.json,
    echoChildren: raw['echo-children'] === 'true' || raw['echo-children'] === '1',
    persist: raw.persist === 'true' || raw.persist === '1',
    relayHops: raw['relay-hops'] === 'true' || raw['relay-hops'] === '1',
  };
}

// ---- the run --------------------------------------------------------------------------

/** The stack's phases, in the order they run (the submit phase's tasks serve status and result). */
async function runPhases(b: Bench): Promise<Report['load']> {
  const has = (p: Phase) => b.opts.phases.has(p);
  const ids = (['submit', 'isolated', 'status', 'result', 'baseline'] as const).some(has) ? await submitPhases(b) : [];
  if (has('status-load')) await statusLoadPhase(b);
  await statusAndBaseline(b, ids);
  if (has('result') && ids.length) await resultPhase(b, ids);
  if (has('ttfe')) await ttfePhase(b);
  if (has('relay')) await relayPhase(b);
  if (has('mcp')) await b.unwatched(mcpPhase);
  if (has('dag')) await b.unwatched(dagPhase);
  if (has('datastores')) await b.unwatched(datastoresPhase);
  if (has('computer')) await b.unwatched(computerPhase);
  if (has('web')) await b.unwatched(webPhase);
  if (has('browser')) await b.unwatched(browserPhase);
  if (has('console')) await b.unwatched(consolePhase);
  if (has('cost')) await b.unwatched(costPhase);
  if (!has('load')) return undefined;
  if (b.left() < 30_000) return void b.log('load phase skipped: not enough of the time limit left');
  b.log(
    `load: ${b.opts.loadTasks} background tasks over ${b.opts.loadAccounts} accounts ([[slow delay=${b.opts.loadDelayMs} tokens=${b.opts.loadTokens}]], streamed), ${b.opts.loadSse} SSE clients`,
  );
  return loadPhase(b, { ...b.pids(), 'bench (model + clients)': process.pid });
}

/** Starts the stack, runs its phases, stops it, prints the report; a run that lost rows or tasks fails. */
async function stackRun(opts: BenchOptions): Promise<void> {
  const b = new Bench(opts);
  const [runMark, loadAvgAtStart, probeStart] = [b.cpu.mark(), os.loadavg(), cpuProbeMs()];
  const whole = { fromUs: 0, toUs: Infinity };
  let load: Report['load'];
  let loadOtherCores: number | undefined;
  try {
    await b.start();
    // Profiles are summarised over the phases only, not the children's start-up.
    whole.fromUs = monotonicUs();
    const m0 = b.cpu.mark();
    load = await runPhases(b);
    if (load) loadOtherCores = CpuMeter.foreignCores(m0, b.cpu.mark());
  } finally {
    whole.toUs = monotonicUs();
    b.log('stopping the stack');
    await b.cleanup();
  }
  const otherCores = { run: CpuMeter.foreignCores(runMark, b.cpu.mark()), load: loadOtherCores };
  const { rows, taskCosts, bursts, relaySplits } = b;
  const probes = { start: probeStart, end: cpuProbeMs() };
  const engine = b.stack.engine ?? 'external';
  printReport({ opts, engine, rows, taskCosts, bursts, relaySplits, load, otherCores, loadAvgAtStart, probes });
  const { gateway, worker, engine: enginePid } = b.pids();
  if (b.profileDir) printProfiles(b.profileDir, { gateway, worker, engine: enginePid }, rows, whole);
  if (opts.jsonOut) {
    const raw = { options: { ...opts, phases: [...opts.phases] }, rows, relaySplits, load };
    fs.writeFileSync(opts.jsonOut, JSON.stringify(raw, null, 2));
    b.log(`raw results written to ${opts.jsonOut}`);
  }
  const failed = (load && (load.timedOut || load.completed !== load.accepted)) || rows.some((r) => r.s.count === 0);
  process.exitCode = failed ? 1 : 0;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2), process.env);
  if (opts.phases.has('express')) await expressPhase(opts);
  if (opts.phases.has('soak')) await soakPhase(opts);
  if (opts.phases.has('capacity')) await capacityPhase(opts);
  if (!STANDALONE.some((p) => opts.phases.has(p))) await stackRun(opts);
}

if (require.main === module)
  main().catch((err) => {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  });
