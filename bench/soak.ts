/**
 * `npm run bench:soak`: a long-run check of a running service (e.g. `npm start`).
 * Sends waves of one-turn background tasks on one account, waits for each wave
 * to finish, lets the stack settle, and prints the wave's throughput and each
 * local process's RSS. Memory that keeps growing from wave to wave, or waves
 * that slow down, are what it is for: faults a few minutes of `npm run bench`
 * do not reach (docs/performance.md, "What the soak found").
 *
 *   npm run bench:soak -- [--url http://127.0.0.1:8080] [--key dev-key] [--waves 5]
 *                         [--per-wave 1000] [--clients 16] [--settle-ms 5000]
 *
 * Start the service with SESSION_IDLE_CLOSE_MS=5000 to have each task's new
 * session close too; with the default (30 min) open sessions are part of the
 * growth by design.
 */
import fs from 'node:fs';
import { closedLoop, request, sleep, target, type HttpTarget } from './measure';
import { readFlags } from './options';
import { readMem } from './stack';

const USAGE = `usage: npm run bench:soak -- [--url URL] [--key KEY] [--waves N] [--per-wave N] [--clients N] [--settle-ms MS]`;

/** Processes reported, by a part of their command line. */
const PROCESSES: [label: string, pattern: string][] = [
  ['gateway', 'src/gateway/main.ts'],
  ['worker', 'src/worker/main.ts'],
  ['engine', 'temporal-dev'],
  ['redis', 'redis-server'],
];

/** RSS in MiB summed over the processes whose command line contains `pattern`; undefined when none runs. */
function rssMiB(pattern: string): number | undefined {
  let kib: number | undefined;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // the process ended while we looked
    }
    if (!cmdline.includes(pattern) || cmdline.includes('bench/soak')) continue;
    const { rssKiB } = readMem(Number(pid));
    if (rssKiB !== undefined) kib = (kib ?? 0) + rssKiB;
  }
  return kib === undefined ? undefined : Math.round(kib / 1024);
}

async function tasksWith(t: HttpTarget, status: string): Promise<number> {
  const r = await request(t, 'GET', `/tasks?status=${status}&limit=1`);
  if (r.status !== 200) throw new Error(`GET /tasks?status=${status} answered ${r.status}: ${r.body}`);
  return (JSON.parse(r.body) as { tasks: unknown[] }).tasks.length;
}

async function main(): Promise<void> {
  const raw: Record<string, string | undefined> = {
    url: `http://127.0.0.1:${process.env.PORT ?? 8080}`,
    key: 'dev-key',
    waves: '5',
    'per-wave': '1000',
    clients: '16',
    'settle-ms': '5000',
  };
  readFlags(process.argv.slice(2), raw, USAGE);
  const num = (name: string) => {
    const v = Number(raw[name]);
    if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
    return v;
  };
  const [url, key] = [raw.url!, raw.key!];
  const [waves, perWave, clients, settleMs] = [num('waves'), num('per-wave'), num('clients'), num('settle-ms')];
  const t = target(url, key, clients);
  const rssLine = () => PROCESSES.map(([label, pattern]) => `${label} ${rssMiB(pattern) ?? '-'}`).join(', ');
  console.log(`soak of ${url}: ${waves} waves of ${perWave} one-turn background tasks from ${clients} clients`);
  console.log(`before: RSS MiB ${rssLine()}`);
  for (let wave = 1; wave <= waves; wave++) {
    const started = Date.now();
    await closedLoop(perWave, clients, async (n) => {
      const r = await request(t, 'POST', '/', { message: `soak ${wave}-${n}`, background: true });
      if (r.status !== 202) throw new Error(`POST / answered ${r.status}: ${r.body}`);
    });
    const submitted = (Date.now() - started) / 1000;
    // Done when nothing of the account is queued or running (the soak's tasks are the account's only ones).
    while ((await tasksWith(t, 'queued')) + (await tasksWith(t, 'running')) > 0) await sleep(250);
    const ended = (Date.now() - started) / 1000;
    await sleep(settleMs);
    console.log(
      `wave ${wave}: ${perWave} submitted in ${submitted.toFixed(1)} s, all ended after ${ended.toFixed(1)} s (${(perWave / ended).toFixed(1)} tasks/s); RSS MiB ${rssLine()}`,
    );
  }
  t.agent.destroy();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
