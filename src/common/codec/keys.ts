// Payload encryption keys: the PAYLOAD_KEYS format (`id:base64key,...`, 32-byte
// AES-256 keys, the first one encrypts), and the key file `npm start` keeps in
// its data folder. No message here ever contains a key: only ids, which are
// stored in every encrypted payload anyway.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface PayloadKey {
  /** Stored in each payload it encrypts, so decoding finds the key again after a rotation. */
  id: string;
  /** 32 bytes (AES-256). */
  key: Buffer;
}

/** A malformed PAYLOAD_KEYS value; the message names entries and ids, never key material. */
export class PayloadKeysError extends Error {}

const KEY_BYTES = 32;
// Ids travel in payload metadata and in error messages: keep them short and printable.
const ID = /^[A-Za-z0-9._-]{1,64}$/;
// Standard or URL-safe base64, padded or not (what `openssl rand -base64 32` and Node print).
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Parses `id:base64key[,id:base64key...]`. Throws PayloadKeysError. */
export function parsePayloadKeys(text: string): PayloadKey[] {
  const entries = text.split(',').map((e) => e.trim());
  if (entries.every((e) => e === ''))
    throw new PayloadKeysError('no keys given; expected id:base64key[,id:base64key...]');
  const keys: PayloadKey[] = [];
  entries.forEach((entry, i) => {
    const where = `entry ${i + 1}`;
    const colon = entry.indexOf(':');
    // The entry itself is never quoted: a key pasted without its id would be printed.
    if (colon < 0) throw new PayloadKeysError(`${where} is not id:base64key`);
    const id = entry.slice(0, colon).trim();
    const encoded = entry.slice(colon + 1).trim();
    if (!ID.test(id)) throw new PayloadKeysError(`${where}: the id must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    if (keys.some((k) => k.id === id)) throw new PayloadKeysError(`${where}: key id "${id}" appears twice`);
    const key = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
    if (!key || key.length !== KEY_BYTES)
      throw new PayloadKeysError(
        `${where}: the key of id "${id}" must be ${KEY_BYTES} bytes in base64 (e.g. openssl rand -base64 32)`,
      );
    keys.push({ id, key });
  });
  return keys;
}

/** A new PAYLOAD_KEYS entry: `k<yyyymmdd>-<random>:<32 random bytes, base64>`. The date tells rotated keys apart. */
export function generatePayloadKey(now = new Date()): string {
  const day = now.toISOString().slice(0, 10).replace(/-/g, '');
  return `k${day}-${randomBytes(3).toString('hex')}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/** The key file of a data folder; it holds a PAYLOAD_KEYS value. */
export function payloadKeyFile(dataDir: string): string {
  return path.join(dataDir, 'payload-keys');
}

/** The key file's PAYLOAD_KEYS value, or undefined when there is none. */
export function readPayloadKeyFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The data folder's keys, creating the file (mode 0600, one new key) when it
 * does not exist. Only the single-machine launcher calls this: it starts the
 * gateway and the worker itself, so no two processes can each create a
 * different key.
 */
export function ensurePayloadKeyFile(dataDir: string): { file: string; keys: string; created: boolean } {
  const file = payloadKeyFile(dataDir);
  const existing = readPayloadKeyFile(file);
  if (existing !== undefined) return { file, keys: existing, created: false };
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const keys = generatePayloadKey();
  try {
    // 'wx': never overwrite a file that appeared meanwhile (its key may already encrypt data).
    fs.writeFileSync(file, `${keys}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { file, keys: readPayloadKeyFile(file) ?? '', created: false };
  }
  return { file, keys, created: true };
}
