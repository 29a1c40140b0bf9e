import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppendLog, AppendLogCorruptionError } from '../../src/storage/append-log';
import { numbered, numberOf, range, scratchDir } from './helpers';

const newPath = scratchDir('append-log-recovery');

/** Writes `count` numbered records and returns the file bytes plus each record's start offset. */
async function buildLog(count: number): Promise<{ image: Buffer; offsets: number[] }> {
  const file = newPath();
  const { log } = await AppendLog.open(file);
  const offsets: number[] = [];
  for (const n of range(0, count)) {
    offsets.push(log.sizeBytes);
    await log.append(numbered(n, 40));
  }
  await log.close();
  return { image: fs.readFileSync(file), offsets };
}

function writeImage(image: Buffer): string {
  const file = newPath();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, image);
  return file;
}

describe('AppendLog recovery', () => {
  it('truncates a torn last record at every byte offset and keeps working', async () => {
    const { image, offsets } = await buildLog(5);
    const lastStart = offsets[4];
    expect(image.length - lastStart).toBe(8 + 44);
    for (let cut = lastStart; cut < image.length; cut++) {
      const file = writeImage(image.subarray(0, cut));
      const { log, records } = await AppendLog.open(file);
      expect(records.map(numberOf)).toEqual([0, 1, 2, 3]);
      expect(log.sizeBytes).toBe(lastStart);
      expect(fs.statSync(file).size).toBe(lastStart);
      await log.append(numbered(100));
      await log.close();

      const { log: reopened, records: after } = await AppendLog.open(file);
      expect(after.map(numberOf)).toEqual([0, 1, 2, 3, 100]);
      await reopened.close();
    }
  });

  it('drops a fully written last record whose checksum does not match', async () => {
    const { image, offsets } = await buildLog(3);
    const damaged = Buffer.from(image);
    damaged[offsets[2] + 8 + 10] ^= 0x01;
    const file = writeImage(damaged);
    const { log, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([0, 1]);
    await log.close();
  });

  it('treats zero-filled garbage after the last record as a torn tail', async () => {
    const { image } = await buildLog(3);
    const file = writeImage(Buffer.concat([image, Buffer.alloc(4096)]));
    const { log, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([0, 1, 2]);
    expect(fs.statSync(file).size).toBe(image.length);
    await log.close();
  });

  it('rejects a corrupt payload in the middle instead of dropping the records after it', async () => {
    const { image, offsets } = await buildLog(5);
    const damaged = Buffer.from(image);
    damaged[offsets[2] + 8 + 5] ^= 0xff;
    const file = writeImage(damaged);
    const opening = AppendLog.open(file);
    await expect(opening).rejects.toThrow(AppendLogCorruptionError);
    await expect(opening).rejects.toThrow(new RegExp(`record 2 at offset ${offsets[2]} is damaged`));
    await opening.catch((error: AppendLogCorruptionError) => expect(error.offset).toBe(offsets[2]));
    // Nothing was truncated, and the failed open did not leave the path locked.
    expect(fs.readFileSync(file)).toEqual(damaged);
    await expect(AppendLog.open(file)).rejects.toThrow(AppendLogCorruptionError);
  });

  it('rejects a corrupt length field in the middle (found by resynchronising)', async () => {
    const { image, offsets } = await buildLog(5);
    for (const bogusLength of [0, 3, 0x00ffffff, 0xffffffff]) {
      const damaged = Buffer.from(image);
      damaged.writeUInt32LE(bogusLength, offsets[1]);
      const file = writeImage(damaged);
      await expect(AppendLog.open(file)).rejects.toThrow(
        /record 1 at offset \d+ is damaged but an intact record follows/,
      );
    }
  });

  it('rejects files that are not append logs or have an unknown version', async () => {
    await expect(AppendLog.open(writeImage(Buffer.from('{"hello": "json"}\n')))).rejects.toThrow(/bad magic/);
    await expect(AppendLog.open(writeImage(Buffer.from('xy')))).rejects.toThrow(/bad header/);
    const { image } = await buildLog(1);
    const future = Buffer.from(image);
    future.writeUInt32LE(2, 4);
    await expect(AppendLog.open(writeImage(future))).rejects.toThrow(/format version 2/);
  });

  it('recovers from a crash while the header was being written', async () => {
    for (const header of [Buffer.alloc(0), Buffer.from('TD'), Buffer.from('TDAL\x01')]) {
      const file = writeImage(header);
      const { log, records } = await AppendLog.open(file);
      expect(records).toEqual([]);
      await log.append(numbered(1));
      await log.close();
      const { log: reopened, records: after } = await AppendLog.open(file);
      expect(after.map(numberOf)).toEqual([1]);
      await reopened.close();
    }
  });

  it('discards the temp file of an interrupted rewrite and keeps the old content', async () => {
    const { image } = await buildLog(3);
    const file = writeImage(image);
    fs.writeFileSync(file + '.rewrite-tmp', Buffer.from('TDAL half written'));
    const { log, records } = await AppendLog.open(file);
    expect(records.map(numberOf)).toEqual([0, 1, 2]);
    expect(fs.existsSync(file + '.rewrite-tmp')).toBe(false);
    await log.close();
  });
});
