import * as fs from 'node:fs';
import { AppendLog } from '../../src/storage/append-log';
import { numbered, numberOf, range, scratchDir } from './helpers';

const newPath = scratchDir('append-log-rewrite');

describe('AppendLog.rewrite', () => {
  it('atomically replaces the content and shrinks the file', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await Promise.all(range(0, 200).map((n) => log.append(numbered(n))));
    const before = log.sizeBytes;
    await log.rewrite([numbered(7), numbered(8)]);
    expect(log.sizeBytes).toBe(fs.statSync(file).size);
    expect(log.sizeBytes).toBeLessThan(before);
    expect(log.stats.rewrites).toBe(1);
    await log.append(numbered(9));
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([7, 8, 9]);
    await reopened.close();
  });

  it('can rewrite to an empty log', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await log.append(numbered(1));
    await log.rewrite([]);
    expect(log.sizeBytes).toBe(8);
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records).toEqual([]);
    await reopened.close();
  });

  it('keeps appends settling while a slow snapshot is written, then carries them behind it', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await Promise.all(range(0, 10).map((n) => log.append(numbered(n))));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let consumed = 0;
    async function* snapshot(): AsyncGenerator<Buffer> {
      yield numbered(100);
      consumed++;
      await gate; // the snapshot's producer is still busy...
      yield numbered(101);
      consumed++;
    }
    let rewritten = false;
    const rewriting = log.rewrite(snapshot()).then(() => (rewritten = true));
    // ...and appends requested meanwhile are durable without waiting for it.
    await log.append(numbered(20));
    await log.append(numbered(21));
    expect(rewritten).toBe(false);
    expect(consumed).toBeLessThan(2);
    await expect(log.rewrite([numbered(1)])).rejects.toThrow(/already being rewritten/);
    release();
    await rewriting;
    expect(log.stats.rewrites).toBe(1);
    expect(log.sizeBytes).toBe(fs.statSync(file).size);
    await log.append(numbered(22));
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([100, 101, 20, 21, 22]);
    await reopened.close();
  });

  it('loses, duplicates and reorders nothing when appends are in flight around a rewrite', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    // A large rewrite keeps the temp file busy long enough for many appends to commit meanwhile.
    const snapshot = range(1_000_000, 1_000_000 + 2000).map((n) => numbered(n, 2000));
    let next = 0;
    let rewriteCalledAt = -1;
    let rewriteDone = false;
    const settled: number[] = [];
    let settledDuringRewrite = 0;

    const appender = async (): Promise<void> => {
      for (let i = 0; i < 30; i++) {
        const n = next++;
        await log.append(numbered(n));
        settled.push(n);
        if (rewriteCalledAt >= 0 && !rewriteDone) settledDuringRewrite++;
      }
    };
    const appenders = range(0, 20).map(appender);
    // Part of the scenario: the appenders run a moment before the rewrite is called.
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Appends requested before this point, committed or still queued, are what the snapshot stands for.
    rewriteCalledAt = next;
    const rewriting = log.rewrite(snapshot).then(() => {
      rewriteDone = true;
    });
    const burst = range(0, 50).map(() => {
      const n = next++;
      return log.append(numbered(n)).then(() => {
        settled.push(n);
        if (!rewriteDone) settledDuringRewrite++;
      });
    });
    await Promise.all([...appenders, rewriting, ...burst]);

    expect(rewriteCalledAt).toBeGreaterThan(0);
    expect(next - rewriteCalledAt).toBeGreaterThanOrEqual(50);
    expect(settledDuringRewrite).toBeGreaterThan(0);
    // Appends settle in call order, whatever the rewrite does.
    expect(settled).toEqual(range(0, next));
    await log.close();

    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([...snapshot.map(numberOf), ...range(rewriteCalledAt, next)]);
    await reopened.close();
  });

  it('keeps the old content and stays usable when the rewrite cannot be written', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await log.append(numbered(1));
    // A directory squatting on the temp path makes creating the temp file fail.
    fs.mkdirSync(file + '.rewrite-tmp');
    const failing = log.rewrite([numbered(50)]);
    const after = log.append(numbered(2));
    await expect(failing).rejects.toThrow(/EISDIR|directory/);
    await after;
    fs.rmdirSync(file + '.rewrite-tmp');
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([1, 2]);
    await reopened.close();
  });
});
