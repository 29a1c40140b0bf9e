/**
 * Append-log throughput: appends/s at concurrency 1 and 100, with fsync on and off.
 * Run: npx tsx bench/bench-append-log.ts (in packages/embedded-temporal/) [durationMs] [payloadBytes] [dir]
 * The directory defaults to the OS temp dir; pass one on the disk you care about.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppendLog } from '../src/storage/append-log';

const durationMs = Number(process.argv[2] ?? 2000);
const payloadBytes = Number(process.argv[3] ?? 100);
const baseDir = process.argv[4] ?? os.tmpdir();

interface Result {
  fsync: boolean;
  concurrency: number;
  appends: number;
  perSecond: number;
  syncs: number;
  recordsPerCommit: number;
}

async function run(dir: string, fsync: boolean, concurrency: number): Promise<Result> {
  const file = path.join(dir, `bench-${fsync ? 'sync' : 'nosync'}-${concurrency}.log`);
  const { log } = await AppendLog.open(file, { fsync });
  const payload = Buffer.alloc(payloadBytes, 0x61);
  let appends = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + durationMs;
  const appender = async (): Promise<void> => {
    while (Date.now() < deadline) {
      await log.append(payload);
      appends++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, appender));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const { syncs, writes } = log.stats;
  await log.close();
  return {
    fsync,
    concurrency,
    appends,
    perSecond: Math.round(appends / seconds),
    syncs,
    recordsPerCommit: Math.round((appends / Math.max(writes, 1)) * 10) / 10,
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(baseDir, 'bench-append-log-'));
  try {
    console.log(`payload ${payloadBytes} B, ${durationMs} ms per case, dir ${dir}`);
    const results: Result[] = [];
    for (const fsync of [true, false]) {
      for (const concurrency of [1, 100]) results.push(await run(dir, fsync, concurrency));
    }
    console.table(results);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
