import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Creates a scratch directory and registers its removal after the current test file. */
export function scratchDir(label: string): () => string {
  let root = '';
  let counter = 0;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), `devserver-${label}-`));
  });
  afterAll(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });
  return () => path.join(root, `case-${++counter}`, 'data.log');
}

/** A distinguishable payload whose content can be verified after recovery. */
export function numbered(n: number, extra = n % 37): Buffer {
  const payload = Buffer.alloc(4 + extra, n & 0xff);
  payload.writeUInt32LE(n, 0);
  return payload;
}

export function numberOf(payload: Buffer): number {
  return payload.readUInt32LE(0);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
