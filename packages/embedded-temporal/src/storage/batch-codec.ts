/**
 * Binary encoding of a mutation batch, the payload of one append-log record.
 *
 *   batch    := u8 version | varint count | mutation*
 *   mutation := u8 op | varint keyLength | key (UTF-8) | [varint valueLength | value]   (value for put/append)
 *
 * Varints are unsigned LEB128. Values are stored raw: no JSON/base64 inflation, and
 * decoding hands out zero-copy views of the record.
 */
import type { Mutation } from './store';

const BATCH_VERSION = 1;
const OP_PUT = 1;
const OP_APPEND = 2;
const OP_DELETE = 3;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(target: Buffer, offset: number, n: number): number {
  while (n >= 0x80) {
    target[offset++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  target[offset++] = n;
  return offset;
}

/** Validates one mutation and returns its encoded size; keeps bad input out of the log. */
export function mutationSize(m: Mutation): number {
  if (typeof m !== 'object' || m === null) throw new TypeError('mutation must be an object');
  if (typeof m.key !== 'string') throw new TypeError('mutation key must be a string');
  const keyBytes = Buffer.byteLength(m.key, 'utf8');
  const keyPart = 1 + varintSize(keyBytes) + keyBytes;
  switch (m.op) {
    case 'put':
    case 'append':
      if (!(m.value instanceof Uint8Array)) throw new TypeError(`${m.op} mutation for "${m.key}" needs a Buffer value`);
      return keyPart + varintSize(m.value.length) + m.value.length;
    case 'delete':
      return keyPart;
    default:
      throw new TypeError(`unknown mutation op ${JSON.stringify((m as { op: unknown }).op)}`);
  }
}

/** Header bytes that precede the mutations of an encoded batch. */
export function batchOverhead(count: number): number {
  return 1 + varintSize(count);
}

/**
 * Encodes and validates a batch; the bytes are copied now, so callers may reuse
 * their buffers as soon as this returns. Throws TypeError on malformed mutations.
 */
export function encodeBatch(batch: readonly Mutation[], sizes?: readonly number[]): Buffer {
  let total = batchOverhead(batch.length);
  const measured = sizes ?? batch.map(mutationSize);
  for (const size of measured) total += size;
  const out = Buffer.allocUnsafe(total);
  out[0] = BATCH_VERSION;
  let offset = writeVarint(out, 1, batch.length);
  for (const m of batch) {
    out[offset++] = m.op === 'put' ? OP_PUT : m.op === 'append' ? OP_APPEND : OP_DELETE;
    const keyBytes = Buffer.byteLength(m.key, 'utf8');
    offset = writeVarint(out, offset, keyBytes);
    offset += out.write(m.key, offset, keyBytes, 'utf8');
    if (m.op !== 'delete') {
      offset = writeVarint(out, offset, m.value.length);
      out.set(m.value, offset);
      offset += m.value.length;
    }
  }
  if (offset !== total) throw new Error(`batch encoding size mismatch (${offset} != ${total})`);
  return out;
}

class Reader {
  offset = 0;
  constructor(private readonly data: Buffer) {}

  byte(): number {
    if (this.offset >= this.data.length) throw new Error('unexpected end of batch');
    return this.data[this.offset++];
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 6; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new Error('varint too long');
  }

  bytes(length: number): Buffer {
    const end = this.offset + length;
    if (end > this.data.length) throw new Error('unexpected end of batch');
    const view = this.data.subarray(this.offset, end);
    this.offset = end;
    return view;
  }
}

/** Decodes one record. Values are views into `record`, which the caller must not mutate. */
export function decodeBatch(record: Buffer): Mutation[] {
  const reader = new Reader(record);
  const version = reader.byte();
  if (version !== BATCH_VERSION) throw new Error(`unsupported batch version ${version}`);
  const count = reader.varint();
  const batch: Mutation[] = [];
  for (let i = 0; i < count; i++) {
    const op = reader.byte();
    const key = reader.bytes(reader.varint()).toString('utf8');
    if (op === OP_DELETE) batch.push({ op: 'delete', key });
    else if (op === OP_PUT || op === OP_APPEND) {
      const value = reader.bytes(reader.varint());
      batch.push({ op: op === OP_PUT ? 'put' : 'append', key, value });
    } else throw new Error(`unknown op code ${op}`);
  }
  if (reader.offset !== record.length) throw new Error('trailing bytes after batch');
  return batch;
}
