// The workspace's record of the calls that change it, for the at-most-once rule of
// computer-activities.ts: one small JSON file per call in the session's state folder (on the
// workspace's own storage, so it survives every process and is where the workspace is), written
// before the call starts and again, with its result, when it ends. Kept for RECORD_DAYS.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface CallRecord {
  tool: string;
  started_at: string;
  /** What the call answered; absent while it runs, or forever when its worker died during it. */
  result?: unknown;
}

export interface CallRecords {
  read(key: string): Promise<CallRecord | undefined>;
  start(key: string, tool: string): Promise<void>;
  finish(key: string, result: unknown): Promise<void>;
}

/** Records older than this are removed when a call starts (a retry comes within minutes). */
const RECORD_DAYS = 7;

export function callRecords(stateDir: string): CallRecords {
  const dir = path.join(stateDir, 'calls');
  const file = (key: string) => path.join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  const write = async (key: string, record: CallRecord) => {
    await fs.mkdir(dir, { recursive: true });
    const target = file(key);
    const tmp = `${target}.${process.pid}.tmp`;
    // fsync'd and renamed: after a crash the record is there whole, or not at all.
    const h = await fs.open(tmp, 'w');
    try {
      await h.writeFile(JSON.stringify(record));
      await h.sync();
    } finally {
      await h.close();
    }
    await fs.rename(tmp, target);
  };
  return {
    async read(key) {
      try {
        return JSON.parse(await fs.readFile(file(key), 'utf8')) as CallRecord;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async start(key, tool) {
      await prune(dir);
      await write(key, { tool, started_at: new Date().toISOString() });
    },
    async finish(key, result) {
      const earlier = await this.read(key);
      await write(key, { tool: earlier?.tool ?? '', started_at: earlier?.started_at ?? '', result });
    },
  };
}

async function prune(dir: string): Promise<void> {
  const cutoff = Date.now() - RECORD_DAYS * 86_400_000;
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const p = path.join(dir, name);
    const st = await fs.stat(p).catch(() => undefined);
    if (st && st.mtimeMs < cutoff) await fs.rm(p, { force: true });
  }
}
