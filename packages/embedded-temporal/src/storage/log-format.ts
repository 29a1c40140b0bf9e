/**
 * On-disk framing of an append log and the recovery scan over it.
 *
 *   file   := header record*
 *   header := magic "TDAL" (4 bytes) | u32 format version
 *   record := u32 payload length | u32 CRC-32 of payload | payload
 *
 * All integers are little-endian. Zero-length payloads are not allowed: a run of
 * zero bytes (what a filesystem may leave behind after a power loss) would
 * otherwise parse as valid empty records, because CRC-32 of nothing is 0.
 */
import { crc32 } from './crc32';

export const MAGIC = Buffer.from('TDAL', 'latin1');
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 8;
export const FRAME_OVERHEAD = 8;
/** Far below Buffer's limit; a length beyond this is treated as a damaged length field. */
export const MAX_RECORD_BYTES = 1 << 30;
/**
 * Upper bound on bytes checksummed while looking for intact records behind a damaged
 * one. A genuine torn tail is at most one group-commit write, so this is only reached
 * by pathological damage, and then we refuse to guess rather than truncate.
 */
const RESYNC_CRC_BUDGET = 256 * 1024 * 1024;

export class AppendLogCorruptionError extends Error {
  override readonly name = 'AppendLogCorruptionError';
  constructor(
    message: string,
    readonly filePath: string,
    /** Byte offset of the first damaged record (or of the header). */
    readonly offset: number,
  ) {
    super(message);
  }
}

export function encodeHeader(): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(FORMAT_VERSION, 4);
  return header;
}

/** Throws RangeError/TypeError for payloads the format cannot hold. */
export function checkPayload(payload: unknown): asserts payload is Buffer {
  if (!Buffer.isBuffer(payload)) throw new TypeError('append log payload must be a Buffer');
  if (payload.length === 0) throw new RangeError('append log payload must not be empty');
  if (payload.length > MAX_RECORD_BYTES) {
    throw new RangeError(`append log payload of ${payload.length} bytes exceeds ${MAX_RECORD_BYTES}`);
  }
}

/** Writes one framed record into `target` at `offset`; returns the offset after it. */
export function writeFrame(payload: Buffer, target: Buffer, offset: number): number {
  target.writeUInt32LE(payload.length, offset);
  target.writeUInt32LE(crc32(payload), offset + 4);
  payload.copy(target, offset + FRAME_OVERHEAD);
  return offset + FRAME_OVERHEAD + payload.length;
}

/**
 * Copies the payload into a fresh frame at call time, so the checksum and the bytes
 * that reach the disk always agree even if the caller later reuses its buffer.
 */
export function encodeFrame(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_OVERHEAD + payload.length);
  writeFrame(payload, frame, 0);
  return frame;
}

export interface ScanResult {
  records: Buffer[];
  /** Offset just past the last intact record; bytes beyond it are a torn tail. */
  validEnd: number;
  /** The file is empty or holds only part of a header (crash during creation). */
  headerMissing: boolean;
}

/** Returns the end offset of an intact record starting at `pos`, or -1. */
function intactRecordEnd(data: Buffer, pos: number, budget?: { left: number }): number {
  if (pos + FRAME_OVERHEAD > data.length) return -1;
  const length = data.readUInt32LE(pos);
  if (length === 0 || length > MAX_RECORD_BYTES) return -1;
  const end = pos + FRAME_OVERHEAD + length;
  if (end > data.length) return -1;
  if (budget) budget.left -= length;
  return crc32(data, pos + FRAME_OVERHEAD, end) === data.readUInt32LE(pos + 4) ? end : -1;
}

/**
 * Looks for any intact record after a damaged one. Finding one means the damage is
 * not a torn tail: records that were once acknowledged follow it, so truncating
 * would silently lose them.
 */
function findIntactRecordAfter(data: Buffer, damagedAt: number): number | 'unknown' {
  const budget = { left: RESYNC_CRC_BUDGET };
  // Most damage is inside a payload with the length intact: check where the next record would start.
  if (damagedAt + FRAME_OVERHEAD <= data.length) {
    const next = damagedAt + FRAME_OVERHEAD + data.readUInt32LE(damagedAt);
    if (next < data.length && intactRecordEnd(data, next, budget) >= 0) return next;
  }
  for (let pos = damagedAt + 1; pos + FRAME_OVERHEAD < data.length; pos++) {
    if (intactRecordEnd(data, pos, budget) >= 0) return pos;
    if (budget.left < 0) return 'unknown';
  }
  return -1;
}

/** Parses a whole log file image. Throws AppendLogCorruptionError for damage that is not a torn tail. */
export function scanLog(data: Buffer, filePath: string): ScanResult {
  if (data.length < HEADER_BYTES) {
    if (encodeHeader().subarray(0, data.length).equals(data)) {
      return { records: [], validEnd: 0, headerMissing: true };
    }
    throw new AppendLogCorruptionError(`${filePath} is not an append log (bad header)`, filePath, 0);
  }
  if (!data.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new AppendLogCorruptionError(`${filePath} is not an append log (bad magic)`, filePath, 0);
  }
  const version = data.readUInt32LE(MAGIC.length);
  if (version !== FORMAT_VERSION) {
    throw new AppendLogCorruptionError(
      `${filePath} has append log format version ${version}; this build reads version ${FORMAT_VERSION}`,
      filePath,
      MAGIC.length,
    );
  }
  const records: Buffer[] = [];
  let pos = HEADER_BYTES;
  while (pos < data.length) {
    const end = intactRecordEnd(data, pos);
    if (end < 0) {
      const intactAt = findIntactRecordAfter(data, pos);
      if (intactAt === -1) break; // torn tail: the caller truncates it away
      const detail =
        intactAt === 'unknown'
          ? 'and the rest of the file could not be verified'
          : `but an intact record follows at offset ${intactAt}`;
      throw new AppendLogCorruptionError(
        `${filePath} is corrupt: record ${records.length} at offset ${pos} is damaged ${detail}; ` +
          'refusing to truncate acknowledged data (restore from backup or move the file aside)',
        filePath,
        pos,
      );
    }
    // Copy so that retaining one recovered record does not pin the whole file image.
    records.push(Buffer.from(data.subarray(pos + FRAME_OVERHEAD, end)));
    pos = end;
  }
  return { records, validEnd: pos, headerMissing: false };
}
