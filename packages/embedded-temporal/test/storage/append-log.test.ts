import * as fs from 'node:fs';
import { AppendLog } from '../../src/storage/append-log';
import { numbered, numberOf, range, scratchDir } from './helpers';

const newPath = scratchDir('append-log');

describe('AppendLog basics', () => {
  it('creates the file and its parent directory, then round-trips records', async () => {
    const file = newPath();
    const first = await AppendLog.open(file);
    expect(first.records).toEqual([]);
    expect(fs.existsSync(file)).toBe(true);
    expect(first.log.sizeBytes).toBe(8);

    const payloads = [Buffer.from('a'), Buffer.alloc(70_000, 7), Buffer.from([0, 1, 2, 3])];
    for (const p of payloads) await first.log.append(p);
    expect(first.log.sizeBytes).toBe(fs.statSync(file).size);
    await first.log.close();

    const second = await AppendLog.open(file);
    expect(second.records).toEqual(payloads);
    await second.log.append(Buffer.from('more'));
    await second.log.close();

    const third = await AppendLog.open(file);
    expect(third.records.map((r) => r.toString('latin1'))).toEqual([
      'a',
      payloads[1].toString('latin1'),
      '\x00\x01\x02\x03',
      'more',
    ]);
    await third.log.close();
  });

  it('writes the documented framing: header, then u32 length, u32 CRC, payload (little-endian)', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await log.append(Buffer.from('123456789'));
    await log.close();
    const bytes = fs.readFileSync(file);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('TDAL');
    expect(bytes.readUInt32LE(4)).toBe(1);
    expect(bytes.readUInt32LE(8)).toBe(9);
    expect(bytes.readUInt32LE(12)).toBe(0xcbf43926);
    expect(bytes.subarray(16).toString('latin1')).toBe('123456789');
  });

  it('copies the payload at call time, so reusing the buffer cannot corrupt the record', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    const scratch = Buffer.from('original');
    const pending = log.append(scratch);
    scratch.fill(0x21);
    await pending;
    await log.close();
    const { log: again, records } = await AppendLog.open(file);
    expect(records.map(String)).toEqual(['original']);
    await again.close();
  });

  it('keeps call order on disk and resolves in call order under 100 concurrent appenders', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    const callOrder: number[] = [];
    const resolveOrder: number[] = [];
    let next = 0;
    const appender = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) {
        const n = next++;
        callOrder.push(n);
        await log.append(numbered(n)).then(() => resolveOrder.push(n));
      }
    };
    await Promise.all(range(0, 100).map(appender));
    expect(callOrder).toHaveLength(2000);
    expect(resolveOrder).toEqual(callOrder);
    const stats = log.stats;
    expect(stats.records).toBe(2000);
    // Coalescing is what makes this fast: far fewer fdatasyncs than records.
    expect(stats.syncs).toBeLessThanOrEqual(2000 / 10);
    await log.close();

    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual(callOrder);
    records.forEach((r) => expect(r).toEqual(numbered(numberOf(r))));
    await reopened.close();
  });

  it('group-commits appends issued in the same tick into one write and one fdatasync', async () => {
    const { log } = await AppendLog.open(newPath());
    await Promise.all(range(0, 100).map((n) => log.append(numbered(n))));
    expect(log.stats).toEqual({ writes: 1, syncs: 1, records: 100, rewrites: 0 });
    await log.close();
  });

  it('coalesces appends that arrive while a flush is in progress', async () => {
    const { log } = await AppendLog.open(newPath());
    const first = log.append(numbered(0));
    // Let the drain start the first write, then pile on while it is in flight.
    await new Promise((resolve) => setImmediate(resolve));
    const rest = range(1, 51).map((n) => log.append(numbered(n)));
    await Promise.all([first, ...rest]);
    expect(log.stats).toEqual({ writes: 2, syncs: 2, records: 51, rewrites: 0 });
    await log.close();
  });

  it('with fsync off still writes everything but never calls fdatasync', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file, { fsync: false });
    await Promise.all(range(0, 300).map((n) => log.append(numbered(n))));
    expect(log.stats.syncs).toBe(0);
    expect(log.stats.writes).toBeGreaterThanOrEqual(1);
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file, { fsync: false });
    expect(records.map(numberOf)).toEqual(range(0, 300));
    await reopened.close();
  });

  it('close() flushes appends that are still pending, then refuses new work', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    const pending = range(0, 10).map((n) => log.append(numbered(n)));
    const closed = log.close();
    await expect(log.append(numbered(99))).rejects.toThrow(/closed/);
    await expect(log.rewrite([])).rejects.toThrow(/closed/);
    await Promise.all(pending);
    await closed;
    await log.close(); // idempotent
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual(range(0, 10));
    await reopened.close();
  });

  it('rejects payloads the format cannot represent', async () => {
    const { log } = await AppendLog.open(newPath());
    await expect(log.append(Buffer.alloc(0))).rejects.toThrow(RangeError);
    await expect(log.append('text' as unknown as Buffer)).rejects.toThrow(TypeError);
    await expect(log.rewrite([Buffer.from('ok'), Buffer.alloc(0)])).rejects.toThrow(RangeError);
    await log.append(Buffer.from('still fine'));
    await log.close();
  });

  it('refuses to open the same file twice in one process', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await expect(AppendLog.open(file)).rejects.toThrow(/already open/);
    await log.close();
    const again = await AppendLog.open(file);
    await again.log.close();
  });

  it('refuses further work after a failed write, and recovers on reopen', async () => {
    const file = newPath();
    const { log } = await AppendLog.open(file);
    await log.append(numbered(1));
    // Simulate an I/O error by closing the descriptor behind the log's back.
    await (log as unknown as { handle: import('node:fs/promises').FileHandle }).handle.close();
    const failed = range(2, 6).map((n) => log.append(numbered(n)));
    for (const p of failed) await expect(p).rejects.toThrow(/failed and must be reopened/);
    await expect(log.append(numbered(9))).rejects.toThrow(/failed and must be reopened/);
    await log.close();
    const { log: reopened, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([1]);
    await reopened.close();
  });
});
