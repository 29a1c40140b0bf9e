import * as fs from 'node:fs';
import { AppendLog } from '../../../devserver/storage/append-log';
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

  it('consumes the iterable at call time', async () => {
    const { log } = await AppendLog.open(newPath());
    let consumed = false;
    function* live(): Generator<Buffer> {
      yield numbered(1);
      consumed = true;
    }
    const pending = log.rewrite(live());
    expect(consumed).toBe(true);
    await pending;
    await log.close();
  });

  it('loses and reorders nothing when appends are in flight around a rewrite', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    // A large rewrite keeps the rewrite busy long enough for appends to queue up behind it.
    const snapshot = range(1_000_000, 1_000_000 + 2000).map((n) => numbered(n, 2000));
    let next = 0;
    let rewriteCalledAt = -1;
    let rewriteDone = false;
    const settled: Array<number | 'rewrite'> = [];
    const appendedDuringRewrite: number[] = [];

    const appender = async (): Promise<void> => {
      for (let i = 0; i < 30; i++) {
        const n = next++;
        if (rewriteCalledAt >= 0 && !rewriteDone) appendedDuringRewrite.push(n);
        await log.append(numbered(n));
        settled.push(n);
      }
    };
    const appenders = range(0, 20).map(appender);
    await new Promise((resolve) => setTimeout(resolve, 5));
    rewriteCalledAt = next;
    const rewriting = log.rewrite(snapshot).then(() => {
      rewriteDone = true;
      settled.push('rewrite');
    });
    // A burst issued right after the call, while the temp file is being written.
    const burst = range(0, 50).map(() => {
      const n = next++;
      appendedDuringRewrite.push(n);
      return log.append(numbered(n)).then(() => settled.push(n));
    });
    await Promise.all([...appenders, rewriting, ...burst]);

    expect(rewriteCalledAt).toBeGreaterThan(0);
    expect(appendedDuringRewrite.length).toBeGreaterThanOrEqual(50);
    // Settlement follows call order: everything before the rewrite, the rewrite, then the rest.
    const rewriteIndex = settled.indexOf('rewrite');
    expect(settled.slice(0, rewriteIndex)).toEqual(range(0, rewriteCalledAt));
    expect(settled.slice(rewriteIndex + 1)).toEqual(range(rewriteCalledAt, next));
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
