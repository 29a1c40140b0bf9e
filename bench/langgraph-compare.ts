// The same workload against this service and against LangGraph's open-source Agent Server
// (`langgraph dev`, in-memory runtime; installed by bench/langgraph/install.sh, its one-node graph
// in bench/langgraph/graph.py), both answering through the project's scripted model, in rounds
// that alternate which side goes first; then a table of ours/theirs ratios (issue 42). Each run on
// either side is one request that also creates its conversation (ours: POST /; theirs:
// POST /threads/{new id}/runs with if_not_exists=create). Latency rows pool their samples over the
// rounds; the burst's figures are the median of the rounds. CPU and memory: each server's process tree.
//   npx tsx bench/langgraph-compare.ts [--rounds 2] [--lg-jobs 50] [--url U --key K [--pids P,P] [--model-port P]]
// --lg-jobs: runs LangGraph runs at once (`langgraph dev` defaults to 1; ours: MAX_RUNNING_TASKS_PER_ACCOUNT, 50).
// --url: an already-running service instead of startStack; its OPENAI_BASE_URL must be this script's model
// (--model-port fixes its port), and --pids names its processes for the CPU and memory rows.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { freePort } from '../src/dev/launcher/processes';
import { startStack, type Stack } from '../src/dev/launcher/stack';
import { startScriptedModel, type ScriptedModel } from '../src/dev/scripted-model';
import { closedLoop, fmtMs, processBusyS, readMem, request, sleep, summarize, table, target } from './measure';
import type { HttpTarget } from './measure';
import { RELAY_TOKEN } from './relay';
import { stackEnv } from './stack';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    'lg-jobs': { type: 'string', default: '50' },
    url: { type: 'string' },
    key: { type: 'string', default: 'bench-key-0123456789' },
    pids: { type: 'string', default: '' },
    'model-port': { type: 'string', default: '0' },
  },
});
const ROUNDS = Number(args.rounds);
const [SUBMITS, RATE, STATUS_GETS, RUNNING, TTFT_RUNS, RELAY_RUNS, RELAY_TOKENS, RELAY_DELAY, BURST] = [
  200, 10, 200, 4, 20, 10, 20, 50, 300,
];
const ROOT = path.resolve(__dirname, '..');
const LG_DIR = path.join(ROOT, 'bench/langgraph');
const log = (s: string) => console.log(`[compare +${(performance.now() / 1000).toFixed(1)}s] ${s}`);

// ---- the two servers, behind one interface ----------------------------------------------

interface Side {
  name: 'ours' | 'theirs';
  api: HttpTarget;
  roots: () => number[]; // the server's processes (with their descendants)
  submit: (message: string) => [string, unknown]; // a background run's request: [path, body]
  accepted: number; // its answer's status code
  runPath: (submitPath: string, answer: any) => string; // where the run's status is read
  finished: string; // a finished run's status word
  waitPath: (runPath: string) => string; // the long-poll that answers when the run has ended...
  succeeded: (body: string) => boolean; // ...and whether its answer says the run succeeded
  stream: (message: string) => [string, unknown]; // a streamed run's request
  tokenText: (data: any) => string | undefined;
}

const ours = (url: string, key: string, roots: () => number[]): Side => ({
  name: 'ours',
  api: target(url, key, BURST + 10),
  roots,
  submit: (message) => ['/', { message, background: true }],
  accepted: 202,
  runPath: (_, a) => `/tasks/${a.task_id}`,
  finished: 'completed',
  waitPath: (p) => `${p}/result?wait=60`,
  succeeded: (body) => /"status":"completed"/.test(body),
  stream: (message) => ['/', { message, streaming_tokens: true }],
  tokenText: (d) => (d?.type === 'agent_response' && typeof d.content === 'string' ? d.content : undefined),
});

const run = (content: string) => ({
  assistant_id: 'agent',
  if_not_exists: 'create',
  input: { messages: [{ role: 'user', content }] },
});
const theirs = (url: string, roots: () => number[]): Side => ({
  name: 'theirs',
  api: target(url, null, BURST + 10),
  roots,
  submit: (message) => [`/threads/${randomUUID()}/runs`, run(message)],
  accepted: 200,
  runPath: (p, a) => `${p}/${a.run_id}`,
  finished: 'success',
  waitPath: (p) => `${p}/join`,
  succeeded: (body) => !/"__error__"/.test(body),
  // stream_mode "messages": each event is [the message so far], its content growing token by token.
  stream: (message) => [`/threads/${randomUUID()}/runs/stream`, { ...run(message), stream_mode: 'messages' }],
  tokenText: (d) => (Array.isArray(d) && typeof d[0]?.content === 'string' ? d[0].content : undefined),
});

/** One background run: the submit's ms, its status path when it was accepted, and the answer in short. */
async function submit(side: Side, message: string): Promise<{ ms: number; run?: string; answer: string }> {
  const [p, body] = side.submit(message);
  const r = await request(side.api, 'POST', p, body).catch((e: Error) => ({ status: 0, body: e.message, ms: NaN }));
  const run = r.status === side.accepted ? side.runPath(p, JSON.parse(r.body)) : undefined;
  return { ms: r.ms, run, answer: `HTTP ${r.status} ${r.body.slice(0, 200)}` };
}
const statusOf = async (side: Side, run: string) => {
  const r = await request(side.api, 'GET', run);
  return { ms: r.ms, status: r.status === 200 ? (JSON.parse(r.body).status as string) : `HTTP ${r.status}` };
};
/** Until the run has ended, by the side's own long-poll: '' when it succeeded, else what the answer was. */
async function wait(side: Side, run: string): Promise<string> {
  for (;;) {
    const r = await request(side.api, 'GET', side.waitPath(run), undefined, { timeoutMs: 120_000 }).catch(
      (e: Error) => ({ status: 0, body: e.message }),
    );
    if (r.status === 409) continue; // ours: still running
    return r.status === 200 && side.succeeded(r.body) ? '' : `HTTP ${r.status} ${r.body.slice(0, 200)}`;
  }
}
/** Waits for all the runs; logs the first failure, returns how many failed. */
async function waitAll(side: Side, runs: string[]): Promise<number> {
  let failed = 0;
  await closedLoop(runs.length, 50, async (i) => {
    const why = await wait(side, runs[i]);
    if (why && !failed++) log(`${side.name}: a run failed: ${why}`);
  });
  return failed;
}

// ---- processes: trees, CPU, memory ------------------------------------------------------

/** The pids and all their descendants (/proc/<pid>/task/<tid>/children). */
function tree(roots: number[]): number[] {
  const out: number[] = [];
  for (const todo = [...roots]; todo.length;) {
    const pid = todo.pop()!;
    out.push(pid);
    try {
      for (const t of fs.readdirSync(`/proc/${pid}/task`))
        todo.push(...(fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').match(/\d+/g) ?? []).map(Number));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const cpuS = (pids: number[]) => pids.reduce((s, p) => s + processBusyS(p), 0);
const rssKiB = (pids: number[]) => pids.reduce((s, p) => s + (readMem(p).rssKiB ?? 0), 0);

/** Until the side's processes use under 0.05 cores for half a second (at most 15 s). */
async function settle(side: Side): Promise<void> {
  for (const t0 = Date.now(); Date.now() - t0 < 15_000;) {
    const pids = tree(side.roots());
    const a = cpuS(pids);
    await sleep(500);
    if (cpuS(pids) - a < 0.025) return;
  }
  log(`${side.name}: still busy after 15 s; measuring anyway`);
}

// ---- the rows -----------------------------------------------------------------------------

type Samples = Record<string, number[]>;
/** The model's write of each relay token (performance.now()), from its onTokenWritten hook. */
const emittedAt = new Map<string, number>();
let tokenSeq = 0;
const relayToken = () => `z${(tokenSeq++ % 36 ** 5).toString(36).padStart(5, '0')}`;

/**
 * POSTs json and reads the SSE answer, handing each event's data to onData with the arrival time of
 * its chunk; resolves with the status code at the stream's end. Not measure.ts's openSse: that one
 * splits events at LF LF only, and LangGraph (sse-starlette) ends its lines with CRLF.
 */
function postSse(t: HttpTarget, p: string, json: unknown, onData: (data: any, at: number) => void): Promise<number> {
  const body = JSON.stringify(json);
  const headers: http.OutgoingHttpHeaders = { accept: 'text/event-stream', 'content-type': 'application/json' };
  headers['content-length'] = Buffer.byteLength(body);
  if (t.key) headers.authorization = `Bearer ${t.key}`;
  return new Promise((resolve, reject) => {
    const { hostname: host, port } = t.base;
    const req = http.request({ host, port, method: 'POST', path: p, agent: t.agent, headers }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now(); // before any parsing
        buf += chunk;
        for (let m; (m = /\r?\n\r?\n/.exec(buf)); buf = buf.slice(m.index + m[0].length)) {
          const lines = buf.slice(0, m.index).split(/\r?\n/);
          const data = lines.flatMap((l) => (l.startsWith('data:') ? l.slice(5).replace(/^ /, '') : [])).join('\n');
          if (!data) continue;
          let parsed: unknown = data;
          try {
            parsed = JSON.parse(data);
          } catch {
            // not JSON: handed on as text
          }
          onData(parsed, at);
        }
      });
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One streamed run: ms to its first token; each relay token's model-write-to-client-read ms into relay. */
async function streamRun(side: Side, message: string, relay: number[] = []): Promise<number> {
  const [p, body] = side.stream(message);
  const seen = new Set<string>();
  let first = NaN;
  const t0 = performance.now();
  const status = await postSse(side.api, p, body, (data, at) => {
    const text = side.tokenText(data);
    if (!text?.trim()) return;
    if (Number.isNaN(first)) first = at - t0;
    for (const w of text.split(/\s+/).filter((w) => RELAY_TOKEN.test(w) && !seen.has(w))) {
      seen.add(w);
      if (emittedAt.has(w)) relay.push(at - emittedAt.get(w)!);
    }
  });
  if (status !== 200 || Number.isNaN(first)) throw new Error(`${side.name} stream: HTTP ${status}, no token`);
  return first;
}

type Round = { side: Side; r: number; add(row: string, v: number): void; err(what: string, n?: number): number };
/** A sample of the row, or an error of it when p fails or gives undefined. */
const record = (c: Round, row: string, p: Promise<number | undefined>) =>
  p.catch(() => undefined).then((v) => void (v === undefined ? c.err(row) : c.add(row, v)));

/** Background submit, paced: request i leaves at i/RATE s, whatever the earlier ones do (open loop). */
async function submitRows(c: Round): Promise<string[]> {
  const { side, r } = c;
  const [runs, sends]: [string[], Promise<void>[]] = [[], []];
  const send = async (i: number) => {
    const x = await submit(side, `[[say text=ok]] submit ${r} ${i}`);
    return x.run ? (runs.push(x.run), x.ms) : undefined;
  };
  for (let i = 0, t0 = performance.now(); i < SUBMITS; i++) {
    await sleep(t0 + (i * 1000) / RATE - performance.now());
    sends.push(record(c, 'submit', send(i)));
  }
  await Promise.all(sends);
  c.err('submitted runs failed', await waitAll(side, runs));
  return runs;
}

/** Status of a finished run (those of submitRows), then of a running one, one client. */
async function statusRows(c: Round, finished: string[]): Promise<void> {
  const { side, r } = c;
  const get = async (run: string, want: string) =>
    ((x) => (x.status === want ? x.ms : undefined))(await statusOf(side, run));
  const read = (row: string, runs: string[], want: string) =>
    closedLoop(STATUS_GETS, 1, (i) => record(c, row, get(runs[i % runs.length], want)));
  await settle(side);
  await read('finished', finished, side.finished);
  // A few slow runs (5 s of tokens), read once each of them says it runs.
  await settle(side);
  const message = (k: number) => `[[slow delay=50 tokens=100]] run ${r} ${k}`;
  const slow = await Promise.all(Array.from({ length: RUNNING }, (_, k) => submit(side, message(k))));
  const runs = slow.flatMap((x) => x.run ?? []);
  for (const p of runs) for (let t = 0; t < 200 && (await statusOf(side, p)).status !== 'running'; t++) await sleep(50);
  await read('running', runs, 'running');
  await waitAll(side, runs);
}

/** Time to first token, then token relay: one stream at a time. */
async function streamRows(c: Round): Promise<void> {
  const { side, r } = c;
  await settle(side);
  for (let i = 0; i < TTFT_RUNS; i++) {
    // A random pause first: LangGraph's in-memory queue polls for new runs (sleeping 0.5 s when idle), so
    // when a run is posted decides how long it waits to start (~1 s right after the previous run ended).
    await sleep(Math.random() * 1000);
    await record(c, 'ttft', streamRun(side, `hello ${r} ${i}`));
  }
  await settle(side);
  for (let i = 0; i < RELAY_RUNS; i++) {
    const words = Array.from({ length: RELAY_TOKENS }, relayToken);
    const phase = Math.floor(Math.random() * RELAY_DELAY); // where in the delay the first token lands
    const msg = `[[say text="${words.join(' ')}"]] [[slow delay=${RELAY_DELAY} first=${phase}]] relay ${r} ${i}`;
    const relay: number[] = [];
    await streamRun(side, msg, relay).catch(() => c.err('relay stream'));
    relay.forEach((ms) => c.add('relay', ms));
    if (relay.length < RELAY_TOKENS) c.err('relay tokens missed', RELAY_TOKENS - relay.length);
  }
}

/** BURST one-turn runs at once: runs/s; the CPU they cost until the server settles; peak summed RSS meanwhile. */
async function burstRows({ side, r, add, err }: Round): Promise<void> {
  await settle(side);
  let pids = tree(side.roots());
  const cpu0 = cpuS(pids);
  let [peak, sampling] = [rssKiB(pids), true];
  const sampler = (async () => {
    for (let n = 1; sampling; n++, await sleep(50)) {
      if (n % 20 === 0) pids = tree(side.roots());
      peak = Math.max(peak, rssKiB(pids));
    }
  })();
  const b0 = performance.now();
  let done = 0;
  const one = async (i: number) => {
    const x = await submit(side, `[[say text=ok]] burst ${r} ${i}`);
    const why = x.run ? await wait(side, x.run) : `submit: ${x.answer}`;
    if (!why) done++;
    else if (!err('burst run failed')) log(`${side.name}: a burst run failed: ${why}`);
  };
  await Promise.all(Array.from({ length: BURST }, (_, i) => one(i)));
  add('burstRate', done / ((performance.now() - b0) / 1000));
  await settle(side);
  sampling = false;
  await sampler;
  add('burstCpu', ((cpuS(pids) - cpu0) * 1000) / BURST);
  add('burstPeak', peak / 1024);
}

async function round(side: Side, r: number, out: Samples, errors: Record<string, number>): Promise<void> {
  log(`round ${r}: ${side.name}`);
  const add = (k: string, v: number) => void (out[k] ??= []).push(v);
  const err = (k: string, n = 1) => {
    const before = errors[k] ?? 0;
    if (n) errors[k] = before + n;
    return before;
  };
  const c: Round = { side, r, add, err };
  await settle(side);
  await statusRows(c, await submitRows(c));
  await streamRows(c);
  await burstRows(c);
}

// ---- starting and stopping ------------------------------------------------------------

let model: ScriptedModel | undefined;
let stack: Stack | undefined;
let lg: ChildProcess | undefined;
let lgMadeDataDir = false;
const alive = (c?: ChildProcess) => !!c?.pid && c.exitCode === null && c.signalCode === null;

async function startLangGraph(modelUrl: string): Promise<string> {
  const install = spawnSync('bash', [`${LG_DIR}/install.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 2] });
  if (install.status !== 0) throw new Error(`bench/langgraph/install.sh failed (exit ${install.status})`);
  const bin = path.resolve(ROOT, path.dirname(install.stdout.trim().split('\n').pop()!), 'langgraph');
  const port = await freePort();
  const argv = ['dev', '--no-browser', '--no-reload', '--port', String(port), '--n-jobs-per-worker', args['lg-jobs']!];
  argv.push('--server-log-level', 'WARNING');
  log(`starting ${path.relative(ROOT, bin)} ${argv.join(' ')} (in bench/langgraph)`);
  const quiet = { LOG_LEVEL: 'WARNING', LANGSMITH_TRACING: 'false', LANGGRAPH_CLI_NO_ANALYTICS: '1' };
  const env = { ...process.env, ...quiet, LANGGRAPH_NO_VERSION_CHECK: 'true', OPENAI_BASE_URL: modelUrl };
  // Its in-memory runtime makes .langgraph_api/ in its working folder (empty with disable_persistence).
  lgMadeDataDir = !fs.existsSync(path.join(LG_DIR, '.langgraph_api'));
  // Its own process group (detached), so that cleanup stops it and whatever it started.
  lg = spawn(bin, argv, { cwd: LG_DIR, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  lg.on('error', (e) => void (stderr += `\n${e.message}`));
  lg.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  for (const t0 = Date.now(); Date.now() - t0 < 90_000; await sleep(250)) {
    if (!alive(lg)) throw new Error(`langgraph dev exited (${lg.exitCode ?? lg.signalCode}):\n${stderr}`);
    const ok = await request(target(url, null, 1), 'GET', '/ok', undefined, { timeoutMs: 1000 }).catch(() => null);
    if (ok?.status === 200) return url;
  }
  throw new Error(`langgraph dev did not answer on ${url}/ok in 90 s:\n${stderr}`);
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    if (alive(lg)) {
      const exited = new Promise((resolve) => lg!.once('exit', resolve));
      process.kill(-lg!.pid!, 'SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (alive(lg)) process.kill(-lg!.pid!, 'SIGKILL');
    }
    if (lgMadeDataDir) fs.rmSync(path.join(LG_DIR, '.langgraph_api'), { recursive: true, force: true });
    await stack?.stop();
    await model?.close();
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => void cleanup().finally(() => process.exit(130)));
process.on('exit', () => {
  // Ended without cleanup (an uncaught error): what is still running is killed, by its own pid.
  const left = [lg, ...Object.values(stack?.children ?? {}).map((c) => c.proc)].filter(alive);
  for (const c of left) if (c) try { process.kill(c === lg ? -c.pid! : c.pid!, 'SIGKILL'); } catch { /* gone */ } // prettier-ignore
});

// ---- the run --------------------------------------------------------------------------

/** Our service, as the bench starts it (bench/stack.ts: in memory, the model at OPENAI_BASE_URL), or --url's. */
async function startOurs(modelUrl: string): Promise<Side> {
  if (args.url) return ours(args.url, args.key!, () => args.pids!.split(',').filter(Boolean).map(Number));
  const { env } = stackEnv(undefined, [`${args.key}:bench`], modelUrl);
  const ports = { gatewayPort: 0, temporalPort: 0, demoMcpPort: 0, demoWebPort: 0 };
  const s = (stack = await startStack({ ...ports, env, log: (line) => log(`stack: ${line}`) }));
  return ours(s.gatewayUrl, args.key!, () => Object.values(s.children).flatMap((c) => c.proc.pid ?? []));
}

function report(samples: Record<Side['name'], Samples>, errors: Record<Side['name'], Record<string, number>>): void {
  const pct = (k: string, p: 'p50' | 'p99') => (s: Samples) => summarize(s[k] ?? [])[p];
  const median = (k: string) => (s: Samples) => {
    const v = [...(s[k] ?? [])].sort((a, b) => a - b);
    return v.length ? (v[(v.length - 1) >> 1] + v[v.length >> 1]) / 2 : NaN;
  };
  const fixed = (d: number) => (v: number) => (Number.isFinite(v) ? v.toFixed(d) : '-');
  const rows: [string, (s: Samples) => number, (v: number) => string][] = [
    [`background submit p50 (ms, ${SUBMITS} at ${RATE}/s)`, pct('submit', 'p50'), fmtMs],
    ['background submit p99 (ms)', pct('submit', 'p99'), fmtMs],
    ['status of a running run p50 (ms)', pct('running', 'p50'), fmtMs],
    ['status of a running run p99 (ms)', pct('running', 'p99'), fmtMs],
    ['status of a finished run p99 (ms)', pct('finished', 'p99'), fmtMs],
    ['time to first token p50 (ms)', pct('ttft', 'p50'), fmtMs],
    ['token relay p50 (ms)', pct('relay', 'p50'), fmtMs],
    ['token relay p99 (ms)', pct('relay', 'p99'), fmtMs],
    [`one-turn runs per second (${BURST} at once)`, median('burstRate'), fixed(1)],
    ['CPU per run in that burst (ms)', median('burstCpu'), fixed(1)],
    ['peak memory during the burst (MiB)', median('burstPeak'), fixed(0)],
  ];
  const lines = rows.map(([label, f, fmt]) => {
    const [a, b] = [f(samples.ours), f(samples.theirs)];
    return [label, fmt(a), fmt(b), Number.isFinite(a / b) ? (a / b).toFixed(2) : '-'];
  });
  console.log(`\n${ROUNDS} rounds, alternating which side goes first; ratio = ours / theirs\n`);
  console.log(table([['row', 'ours', 'theirs', 'ratio'], ...lines]));
  for (const name of ['ours', 'theirs'] as const) {
    const n = Object.entries(samples[name]).map(([k, v]) => `${k} ${v.length}`);
    console.log(`${name}: samples ${n.join(', ')}; errors ${JSON.stringify(errors[name])}`);
  }
}

async function main(): Promise<void> {
  const onTokenWritten = (delta: Record<string, unknown>) => {
    const k = typeof delta.content === 'string' ? delta.content.trim() : '';
    if (RELAY_TOKEN.test(k)) emittedAt.set(k, performance.now());
  };
  model = await startScriptedModel({ port: Number(args['model-port']), onTokenWritten });
  log(`scripted model at ${model.url}`);
  const our = await startOurs(model.url);
  const their = theirs(await startLangGraph(model.url), () => (lg?.pid ? [lg.pid] : []));
  const about = (side: Side) => `${side.api.base.origin} (${tree(side.roots()).length} processes)`;
  log(`ours ${about(our)}, theirs ${about(their)}`);
  // Warm-up, not measured: both servers' first runs and streams.
  for (const side of [our, their]) {
    const subs = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(side, `warm-up ${i}`)));
    await waitAll(
      side,
      subs.flatMap((x) => x.run ?? []),
    );
    for (let i = 0; i < 3; i++) await streamRun(side, `warm-up ${i}`);
  }
  const samples = { ours: {}, theirs: {} };
  const errors = { ours: {}, theirs: {} };
  for (let r = 1; r <= ROUNDS; r++)
    for (const side of r % 2 ? [our, their] : [their, our]) await round(side, r, samples[side.name], errors[side.name]);
  report(samples, errors);
}

main()
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
