/**
 * `npm run bench:compaction`: what a compaction of the embedded engine's durable
 * log costs the writes around it. Builds a log of --runs runs (history appends
 * and state puts of realistic sizes, plus as much garbage), then compacts it
 * while a steady stream of small writes (an engine's group commits) goes on, and
 * prints the writes' latency and the event loop's longest stall during the
 * compaction next to the same figures without one.
 *
 *   npm run bench:compaction -- [--runs 8000] [--run-bytes 8000] [--rate 500]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { FileStore, Mutation } from '../src/storage/store';
import { summarize, fmtMs } from './bench-stats';

function flag(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : dflt;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const runs = flag('runs', 8000);
  const runBytes = flag('run-bytes', 8000);
  const rate = flag('rate', 500);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-compaction-'));
  const { store } = await FileStore.open(path.join(dir, 'log'));
  try {
    const live = await fillLog(store, runs, runBytes);
    const sizeBefore = store.sizeBytes;

    const quiet = await measureWrites(store, runs, rate, 3000);
    const compacting = await measureWrites(store, runs, rate, 0, () => store.compact(live));
    const line = (label: string, r: typeof quiet) =>
      `${label.padEnd(28)} writes n=${r.lat.count} p50=${fmtMs(r.lat.p50)} p99=${fmtMs(r.lat.p99)} max=${fmtMs(r.lat.max)} ms   event loop longest stall ${fmtMs(r.maxStallMs)} ms`;
    console.log(
      `log: ${runs} runs of ~${runBytes} B, ${(sizeBefore / 2 ** 20).toFixed(0)} MiB before compaction, ${(store.sizeBytes / 2 ** 20).toFixed(0)} MiB after; ${rate} writes/s (fdatasync on)`,
    );
    console.log(line('no compaction (3 s)', quiet));
    console.log(line(`during compaction (${(compacting.took / 1000).toFixed(1)} s)`, compacting));
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes the runs' history batches and states, then the states again; returns the live state (what compaction keeps). */
async function fillLog(store: FileStore, runs: number, runBytes: number): Promise<Mutation[]> {
  // The engine's live state: per run, a few history batches and its state.
  const live: Mutation[] = [];
  for (let r = 0; r < runs; r++) {
    const key = `h/run-${r}`;
    for (let b = 0; b < 4; b++)
      live.push({ op: 'append', key, value: Buffer.alloc(Math.floor((runBytes * 0.8) / 4), r & 0xff) });
    live.push({ op: 'put', key, value: Buffer.alloc(Math.floor(runBytes * 0.2), 1) });
  }
  // Written twice over (states replaced), so half the file is garbage, as before a real compaction.
  for (let i = 0; i < live.length; i += 500) await store.write(live.slice(i, i + 500));
  for (let r = 0; r < runs; r += 100) {
    await store.write(
      Array.from({ length: Math.min(100, runs - r) }, (_, k) => ({
        op: 'put' as const,
        key: `h/run-${r + k}`,
        value: Buffer.alloc(Math.floor(runBytes * 0.2), 2),
      })),
    );
  }
  return live;
}

/** Small appends at `rate` a second for `ms` (or while `during` runs): their latencies and the event loop's longest stall. */
async function measureWrites(store: FileStore, runs: number, rate: number, ms: number, during?: () => Promise<void>) {
  const lat: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let stop = false;
  let i = 0;
  const writer = (async () => {
    const pending: Promise<void>[] = [];
    const t0 = performance.now();
    while (!stop) {
      const at = t0 + (i * 1000) / rate;
      const wait = at - performance.now();
      if (wait > 0) await sleep(wait);
      const started = performance.now();
      pending.push(
        store
          .write([{ op: 'append', key: `h/run-${i % runs}`, value: Buffer.alloc(300, 3) }])
          .then(() => void lat.push(performance.now() - started)),
      );
      i++;
    }
    await Promise.all(pending);
  })();
  const t = performance.now();
  if (during) await during();
  else await sleep(ms);
  const took = performance.now() - t;
  stop = true;
  await writer;
  delay.disable();
  return { lat: summarize(lat), maxStallMs: delay.max / 1e6, took };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
