// `npm run bench:capacity -- --url <GATEWAY_URL> --key <key>`: the capacity of a service that is
// already running, e.g. the cluster of scripts/cluster.sh (docs/operations.md, "Capacity"). Three
// rows: one-turn tasks per second with the CPU each kind of process spent on them (where the
// bottleneck is); N agents waiting in a timer (a task between turns, holding no activity) and N
// agents in a model call (each holding an activity slot), with the workers' memory per agent.
// The processes are this machine's, found by their command lines.
import fs from 'node:fs';
import type { BenchOptions } from './main';
import {
  closedLoop,
  countTasks as count,
  processBusyS,
  readMem,
  request,
  sleep,
  target,
  type HttpTarget,
} from './measure';

/** The kinds of process of a deployment, by what their command lines contain. */
const KINDS: [kind: string, pattern: RegExp][] = [
  ['gateway', /src\/gateway\/main\.ts/],
  ['worker', /src\/worker\/main\.ts/],
  ['temporal', /temporal-server-[\d.]+\/bin\/server|temporal-dev|temporal server start-dev/],
  ['postgres', /^postgres/],
  ['redis', /redis-server/],
  ['haproxy', /haproxy/],
];

function pidsByKind(): Map<string, number[]> {
  const found = new Map<string, number[]>(KINDS.map(([k]) => [k, []]));
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && d !== String(process.pid))) {
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // ended while we looked
    }
    const kind = KINDS.find(([, p]) => p.test(cmdline))?.[0];
    if (kind) found.get(kind)!.push(Number(pid));
  }
  return found;
}

const cpuOf = (pids: Map<string, number[]>) =>
  new Map([...pids].map(([k, list]) => [k, list.reduce((s, p) => s + processBusyS(p), 0)]));
const workerRssKiB = () => (pidsByKind().get('worker') ?? []).reduce((s, p) => s + (readMem(p).rssKiB ?? 0), 0);

/** One-turn background tasks as fast as `clients` submit them, until all ended: tasks/s and CPU-s per kind. */
async function throughput(t: HttpTarget, tasks: number, clients: number): Promise<void> {
  const pids = pidsByKind();
  const before = cpuOf(pids);
  const started = Date.now();
  await closedLoop(tasks, clients, async (n) => {
    const r = await request(t, 'POST', '/', { message: `capacity ${n}`, background: true });
    if (r.status !== 202) throw new Error(`POST / answered ${r.status}: ${r.body}`);
  });
  while ((await count(t, 'queued')) + (await count(t, 'running')) > 0) await sleep(250);
  const s = (Date.now() - started) / 1000;
  const after = cpuOf(pids);
  const cpu = [...after].map(([k, v]) => `${k} ${(v - before.get(k)!).toFixed(1)}`).join(', ');
  console.log(`one-turn tasks: ${tasks} in ${s.toFixed(1)} s = ${(tasks / s).toFixed(1)} tasks/s; CPU-s: ${cpu}`);
}

/** `agents` background tasks held in `message`'s state, the workers' RSS per agent, then all cancelled. */
async function held(t: HttpTarget, what: string, agents: number, message: string): Promise<void> {
  const rss0 = workerRssKiB();
  const ids: string[] = [];
  await closedLoop(agents, 16, async (n) => {
    const r = await request(t, 'POST', '/', { message: `${message} ${n}`, background: true });
    if (r.status !== 202) throw new Error(`POST / answered ${r.status}: ${r.body}`);
    ids.push((JSON.parse(r.body) as { task_id: string }).task_id);
  });
  while ((await count(t, 'running')) < agents) await sleep(500);
  await sleep(5000); // the workers' heaps settle with the agents in place
  const rss1 = workerRssKiB();
  const perAgent = (rss1 - rss0) / agents;
  console.log(
    `${agents} agents ${what}: workers' RSS ${(rss0 / 1024).toFixed(0)} -> ${(rss1 / 1024).toFixed(0)} MiB, ${perAgent.toFixed(0)} KiB per agent`,
  );
  await closedLoop(ids.length, 16, async (i) => void (await request(t, 'POST', `/tasks/${ids[i]}/cancel`)));
  while ((await count(t, 'running')) > 0) await sleep(500);
}

export async function capacityPhase(
  o: Pick<BenchOptions, 'url' | 'key' | 'capacityTasks' | 'capacityAgents' | 'soakClients'>,
): Promise<void> {
  const t = target(o.url, o.key, Math.max(o.soakClients, 16));
  const kinds = [...pidsByKind()].map(([k, p]) => `${k} ${p.length}`).join(', ');
  console.log(`capacity of ${o.url} (processes here: ${kinds})`);
  try {
    await throughput(t, o.capacityTasks, o.soakClients);
    await held(t, 'waiting in a timer', o.capacityAgents, '[[tool name=wait args={"seconds":900}]] wait');
    await held(t, 'in a model call', o.capacityAgents, '[[slow first=900000 delay=0]] think');
  } finally {
    t.agent.destroy();
  }
}
