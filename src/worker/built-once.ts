// A file built at most once by the processes of one machine that need it together: workers
// starting at once (a test run's stacks, a deploy of several workers, the replay CLI beside a
// worker) would otherwise each run the same seconds-long build and race to write one result.
// The first to need it takes `<file>.lock` (created exclusively, holding its pid) and builds;
// the others wait for the file. A lock whose process is gone, or one left without a pid, is
// taken over; a folder where no lock can be made, or a builder that takes too long, means
// building without one.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a lock may stay without its pid (its maker died between creating and writing it). */
const PIDLESS_LOCK_MS = 10_000;

export interface BuiltOnceOptions {
  /** Between two looks at the file while another process builds it. */
  pollMs?: number;
  /** How long to wait on a live builder before building here as well (one stuck must not hold the rest). */
  maxWaitMs?: number;
}

/**
 * The content of `file`: read when it is there, else made by `build` and written whole (a
 * write that fails is passed over: the content is returned all the same).
 */
export async function builtOnce(
  file: string,
  build: () => Promise<string>,
  opts: BuiltOnceOptions = {},
): Promise<string> {
  const giveUpAt = Date.now() + (opts.maxWaitMs ?? 120_000);
  for (;;) {
    const done = readOr(file);
    if (done !== undefined) return done;
    let lock = takeLock(`${file}.lock`);
    if (lock === 'busy' && Date.now() >= giveUpAt) lock = 'none';
    if (lock === 'busy') {
      await sleep(opts.pollMs ?? 100);
      continue;
    }
    try {
      // Built by the lock's previous holder between the look above and the lock.
      const built = lock === 'held' ? readOr(file) : undefined;
      if (built !== undefined) return built;
      const content = await build();
      writeWhole(file, content);
      return content;
    } finally {
      if (lock === 'held') fs.rmSync(`${file}.lock`, { force: true });
    }
  }
}

type Lock = 'held' | 'busy' | 'none';

function takeLock(lock: string): Lock {
  try {
    fs.mkdirSync(path.dirname(lock), { recursive: true });
  } catch {
    // the create below says whether a lock can be made there
  }
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return 'held';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return 'none';
    if (!abandoned(lock)) return 'busy';
    // Another waiter may take it over at the same moment: both then try the exclusive create
    // again (a third process's new lock removed here costs one more build, not a torn file).
    fs.rmSync(lock, { force: true });
    return 'busy';
  }
}

/** The lock's process is gone, or it never wrote its pid. */
function abandoned(lock: string): boolean {
  let stat: fs.Stats;
  let pid: number;
  try {
    stat = fs.statSync(lock);
    pid = Number(fs.readFileSync(lock, 'utf8'));
  } catch {
    return false; // released meanwhile: the next look finds the file or takes the lock
  }
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - stat.mtimeMs > PIDLESS_LOCK_MS;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function writeWhole(file: string, content: string): void {
  try {
    // Readers never see a half-written file: it appears whole, by a rename.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } catch {
    // a cache that cannot be written is passed over
  }
}
