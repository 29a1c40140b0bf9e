// The load phase of `npm run bench`: many slow background tasks in flight at
// once, a crowd of SSE clients on their event streams, and the peak memory of
// every process of the stack while that lasts.
import { performance } from 'node:perf_hooks';
import type { ScriptedModel } from '../src/scripted-model';
import { closedLoop, HttpTarget, openSse, request, SseStream } from './bench-http';
import { readMem, RssSampler } from './bench-proc';
import { summarize, Summary } from './bench-stats';
import type { RelayWatcher } from './bench-watch';

export interface LoadInput {
  api: HttpTarget;
  /** Separate agent without a socket cap: every SSE client holds its own connection. */
  sse: HttpTarget;
  watcher: RelayWatcher;
  model: ScriptedModel;
  pids: Record<string, number | undefined>;
  /** API keys of the accounts the tasks are spread over, round robin. */
  keys: string[];
  tasks: number;
  sseClients: number;
  tokens: number;
  delayMs: number;
  concurrency: number;
  timeoutMs: number;
  log: (s: string) => void;
}

export interface ProcessMem {
  beforeKiB?: number;
  peakSampledKiB?: number;
  /** VmHWM after the phase: the process's lifetime peak, which the load phase normally sets. */
  hwmKiB?: number;
}

export interface LoadResult {
  tasks: number;
  accepted: number;
  submitErrors: number;
  submit: Summary;
  submitSeconds: number;
  /** Accepted and not yet ended, at its highest. */
  peakInFlight: number;
  /** Model calls open at once, at the highest (bounded by the worker's activity slots). */
  peakModelCalls: number;
  ended: number;
  completed: number;
  /** Load start to the last task's end. */
  drainSeconds: number;
  timedOut: boolean;
  sse: { requested: number; opened: number; peakOpen: number; completed: number; tokens: number; seqGaps: number; failed: number };
  statusSweep: Record<string, number>;
  mem: Record<string, ProcessMem>;
}

interface SseClient {
  taskId: string;
  stream?: SseStream;
  failed: boolean;
  completed: boolean;
  tokens: number;
  lastSeq: number;
  gaps: number;
}

export async function runLoad(inp: LoadInput): Promise<LoadResult> {
  const mem: Record<string, ProcessMem> = {};
  for (const [name, pid] of Object.entries(inp.pids)) mem[name] = { beforeKiB: readMem(pid).rssKiB };
  const sampler = new RssSampler(inp.pids);
  sampler.start(250);

  const t0 = performance.now();
  const accepted: { id: string; at: number; key: string }[] = [];
  const latencies: number[] = [];
  let submitErrors = 0;
  const every = inp.sseClients > 0 ? Math.max(1, Math.floor(inp.tasks / inp.sseClients)) : Infinity;
  const clients: SseClient[] = [];
  const opening: Promise<void>[] = [];
  let openNow = 0;
  let peakOpen = 0;
  let peakModelCalls = 0;

  const progress = setInterval(() => {
    const ended = accepted.filter((a) => inp.watcher.ended.has(a.id)).length;
    inp.log(`load: ${accepted.length}/${inp.tasks} accepted, ${ended} ended, ${accepted.length - ended} in flight, ${openNow} SSE open, ${inp.model.stats().active} model calls open`);
  }, 5000);
  const modelSampler = setInterval(() => (peakModelCalls = Math.max(peakModelCalls, inp.model.stats().active)), 100);

  const openClient = (taskId: string, key: string) => {
    const c: SseClient = { taskId, failed: false, completed: false, tokens: 0, lastSeq: 0, gaps: 0 };
    clients.push(c);
    opening.push(
      openSse(inp.sse, 'GET', `/tasks/${taskId}/events`, undefined, (ev) => {
        const seq = Number(ev.data?.seq);
        if (seq !== c.lastSeq + 1) c.gaps++;
        c.lastSeq = seq;
        if (ev.data?.type === 'agent_response') c.tokens++;
        if (ev.data?.type === 'agent_completed') c.completed = true;
      }, { key }).then(
        (stream) => {
          c.stream = stream;
          if (stream.status !== 200) {
            c.failed = true;
            return;
          }
          openNow++;
          peakOpen = Math.max(peakOpen, openNow);
          void stream.done.then(() => openNow--);
        },
        () => void (c.failed = true),
      ),
    );
  };

  await closedLoop(inp.tasks, inp.concurrency, async (i) => {
    if (performance.now() - t0 > inp.timeoutMs) return;
    const key = inp.keys[i % inp.keys.length];
    try {
      const r = await request(inp.api, 'POST', '/', { message: `[[slow delay=${inp.delayMs} tokens=${inp.tokens}]] load ${i}`, background: true, streaming_tokens: true }, { key });
      if (r.status !== 202) {
        submitErrors++;
        return;
      }
      const id = (JSON.parse(r.body) as { task_id: string }).task_id;
      accepted.push({ id, at: performance.now(), key });
      latencies.push(r.ms);
      if (i % every === 0 && clients.length < inp.sseClients) openClient(id, key);
    } catch {
      submitErrors++;
    }
  });
  const submitSeconds = (performance.now() - t0) / 1000;
  inp.log(`load: ${accepted.length} tasks accepted in ${submitSeconds.toFixed(1)} s; waiting for them to finish`);
  await Promise.all(opening);

  const ids = accepted.map((a) => a.id);
  const keyOf = new Map(accepted.map((a) => [a.id, a.key]));
  const missing = await inp.watcher.waitAll(ids, Math.max(1000, inp.timeoutMs - (performance.now() - t0)));
  clearInterval(progress);
  clearInterval(modelSampler);
  // Streams end right after their terminal event; give stragglers a moment.
  await Promise.race([Promise.all(clients.map((c) => c.stream?.done)), new Promise((r) => setTimeout(r, 10_000))]);
  for (const c of clients) c.stream?.close();
  sampler.stop();
  for (const [name, pid] of Object.entries(inp.pids)) {
    mem[name].peakSampledKiB = sampler.peakKiB[name];
    mem[name].hwmKiB = readMem(pid).hwmKiB;
  }

  // Peak in flight from the timeline: +1 at each 202, -1 at each end.
  const steps: [number, number][] = [];
  let lastEnd = t0;
  for (const a of accepted) {
    steps.push([a.at, 1]);
    const e = inp.watcher.ended.get(a.id);
    if (e) {
      steps.push([Math.max(e.at, a.at), -1]);
      lastEnd = Math.max(lastEnd, e.at);
    }
  }
  steps.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let inFlight = 0;
  let peakInFlight = 0;
  for (const [, d] of steps) peakInFlight = Math.max(peakInFlight, (inFlight += d));

  // The API's own word on every task (sequential-ish, so it does not skew the numbers above).
  const statusSweep: Record<string, number> = {};
  await closedLoop(ids.length, 8, async (i) => {
    try {
      const r = await request(inp.api, 'GET', `/tasks/${ids[i]}`, undefined, { key: keyOf.get(ids[i]) });
      const s = r.status === 200 ? (JSON.parse(r.body) as { status: string }).status : `http ${r.status}`;
      statusSweep[s] = (statusSweep[s] ?? 0) + 1;
    } catch {
      statusSweep['request failed'] = (statusSweep['request failed'] ?? 0) + 1;
    }
  });

  const ended = ids.length - missing.length;
  return {
    tasks: inp.tasks,
    accepted: accepted.length,
    submitErrors,
    submit: summarize(latencies),
    submitSeconds,
    peakInFlight,
    peakModelCalls,
    ended,
    completed: ids.filter((id) => inp.watcher.ended.get(id)?.type === 'agent_completed').length,
    drainSeconds: (lastEnd - t0) / 1000,
    timedOut: missing.length > 0,
    sse: {
      requested: clients.length,
      opened: clients.filter((c) => c.stream?.status === 200).length,
      peakOpen,
      completed: clients.filter((c) => c.completed).length,
      tokens: clients.reduce((n, c) => n + c.tokens, 0),
      seqGaps: clients.reduce((n, c) => n + c.gaps, 0),
      failed: clients.filter((c) => c.failed).length,
    },
    statusSweep,
    mem,
  };
}
