/**
 * `npm run bench:express`: what Express's per-request prototype change costs,
 * and what createExpressServer (src/common/http/express-server.ts) gets back. Two
 * server processes serve the same JSON route, one on http.createServer(app),
 * one on createExpressServer(app); the bench's measuring client (its own
 * process, warmed up) times closed loops of 1 and 8 clients against each in
 * turn, and each server reports its own GC pauses over the measured requests.
 *
 *   npm run bench:express -- [--requests 5000] [--rounds 2]
 */
import type { ChildProcess } from 'node:child_process';
import { startBenchClient, type BenchClient, type RequestSpec } from './client';
import { fmtMs, summarize, table } from './measure';
import { readFlags } from './options';
import { spawnEntry, stopChild, waitForPort } from './stack';

const USAGE = 'usage: npm run bench:express -- [--requests 5000] [--rounds 2]';

interface Server {
  mode: 'stock' | 'born';
  base: string;
  child: ChildProcess;
}

async function startServer(mode: Server['mode']): Promise<Server> {
  const child = spawnEntry('servers.ts', ['express', mode], process.env);
  return { mode, base: `http://127.0.0.1:${await waitForPort(child)}`, child };
}

const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
const reqs = (k: number): RequestSpec[] =>
  Array.from({ length: k }, (_, i) => ({ method: 'GET', path: `/status?n=${i}` }));

/** One row: n requests of `concurrency` clients against one server, with the GC pauses the server saw meanwhile. */
async function measureServer(
  client: BenchClient,
  s: Server,
  concurrency: number,
  round: number,
  n: number,
): Promise<string[]> {
  await client.run({ base: s.base, key: null, concurrency, warmup: reqs(1000), requests: [] });
  await fetch(`${s.base}/gc/reset`, { method: 'POST' });
  const r = await client.run({ base: s.base, key: null, concurrency, warmup: [], requests: reqs(n) });
  const gc = (await (await fetch(`${s.base}/gc`)).json()) as { minor: number[]; major: number[] };
  const lat = summarize(r.ms.filter((v, i) => r.status[i] === 200 && Number.isFinite(v)));
  const errors = n - lat.count;
  return [
    s.mode === 'stock' ? 'http.createServer(app)' : 'createExpressServer(app)',
    String(concurrency),
    String(round),
    errors ? `${lat.count} (${errors} failed)` : String(lat.count),
    fmtMs(lat.p50),
    fmtMs(lat.p99),
    fmtMs(lat.max),
    String(gc.minor.length),
    `${fmtMs(sum(gc.minor))} / ${fmtMs(Math.max(0, ...gc.minor))}`,
    String(gc.major.length),
    `${fmtMs(sum(gc.major))} / ${fmtMs(Math.max(0, ...gc.major))}`,
  ];
}

async function main(): Promise<void> {
  const raw: Record<string, string | undefined> = { requests: '5000', rounds: '2' };
  readFlags(process.argv.slice(2), raw, USAGE);
  const [n, rounds] = [Number(raw.requests), Number(raw.rounds)];
  if (![n, rounds].every((v) => Number.isInteger(v) && v > 0))
    throw new Error('--requests and --rounds must be positive integers');
  const servers = [await startServer('stock'), await startServer('born')];
  const client = startBenchClient(process.env);
  const rows: string[][] = [
    [
      'server',
      'clients',
      'round',
      'n',
      'p50 ms',
      'p99 ms',
      'max ms',
      'scavenges',
      'scavenge ms (sum / max)',
      'full GCs',
      'full GC ms (sum / max)',
    ],
  ];
  try {
    for (const s of servers) await client.warm(s.base, 3000);
    for (let round = 1; round <= rounds; round++) {
      // Alternating servers within a round spreads any drift of the machine over both.
      for (const concurrency of [1, 8]) {
        for (const s of servers) {
          rows.push(await measureServer(client, s, concurrency, round, n));
          process.stderr.write(`[bench:express] ${rows.at(-1)!.join('  ')}\n`);
        }
      }
    }
  } finally {
    client.close();
    await Promise.all(servers.map((s) => stopChild(s.child)));
  }
  console.log(
    `\n-- Express 5 on http.createServer vs createExpressServer: GET /status (JSON), ${n} requests per row --\n${table(rows)}\n`,
  );
  console.log('Both servers run the same app; only the server differs. Express re-parents every request and response');
  console.log('(Object.setPrototypeOf) unless they are born with its prototypes; the GC columns show what that costs.');
  console.log(
    'Closed loops, no think time, measured by the bench client in its own process after 1000 warm-up requests.\n',
  );
}

main().catch((err) => {
  process.stderr.write(`bench:express failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
