// PAYLOAD_KEYS: the `id:base64key,...` format, its validation through the
// config schema (errors name the variable, never a key), the launcher's key
// file, and which keys a process without the launcher takes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../src/common/config';
import { configError } from '../config-error';
import {
  ensurePayloadKeyFile,
  generatePayloadKey,
  parsePayloadKeys,
  payloadKeyFile,
  PayloadKeysError,
} from '../../../src/common/codec/keys';
import { payloadCodec, payloadKeysInForce } from '../../../src/common/codec/data-converter';

const b64 = (bytes = 32) => randomBytes(bytes).toString('base64');

describe('parsePayloadKeys', () => {
  test('one key, several keys (the first encrypts), spaces around entries', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    expect(parsePayloadKeys(`k1:${a.toString('base64')}`)).toEqual([{ id: 'k1', key: a }]);
    const keys = parsePayloadKeys(` new-2025.01_b : ${b.toString('base64')} , old:${a.toString('base64')} `);
    expect(keys.map((k) => k.id)).toEqual(['new-2025.01_b', 'old']);
    expect(keys[0].key.equals(b)).toBe(true);
  });

  test('URL-safe and unpadded base64 are accepted', () => {
    const k = randomBytes(32);
    expect(parsePayloadKeys(`k:${k.toString('base64url')}`)[0].key.equals(k)).toBe(true);
  });

  test.each([
    ['empty', '', /no keys given/],
    ['an entry without an id', b64(), /entry 1 is not id:base64key/],
    ['a bad id', `bad id:${b64()}`, /entry 1: the id must be/],
    ['a repeated id', `a:${b64()},a:${b64()}`, /entry 2: key id "a" appears twice/],
    ['a key of 16 bytes', `a:${b64(16)}`, /entry 1: the key of id "a" must be 32 bytes/],
    ['a key that is not base64', `a:${'!'.repeat(44)}`, /entry 1: the key of id "a" must be 32 bytes/],
    ['an empty second entry', `a:${b64()},`, /entry 2 is not id:base64key/],
  ])('refuses %s, naming the entry but never the key', (_what, value, message) => {
    let err: unknown;
    try {
      parsePayloadKeys(value);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PayloadKeysError);
    expect((err as Error).message).toMatch(message);
    for (const part of value.split(/[,:]/)) if (part.length >= 20) expect((err as Error).message).not.toContain(part);
  });

  test('generatePayloadKey makes a valid, dated, unique entry', () => {
    const a = generatePayloadKey(new Date('2025-03-04T05:06:07Z'));
    expect(a).toMatch(/^k20250304-[0-9a-f]{6}:/);
    expect(parsePayloadKeys(a)[0].key).toHaveLength(32);
    expect(generatePayloadKey()).not.toBe(generatePayloadKey());
  });
});

describe('PAYLOAD_KEYS in the config schema', () => {
  test('a valid value loads as given; unset is allowed (the key file may hold the keys)', () => {
    const value = `k1:${b64()},k0:${b64()}`;
    expect(loadConfig({ PAYLOAD_KEYS: value }).PAYLOAD_KEYS).toBe(value);
    expect(loadConfig({}).PAYLOAD_KEYS).toBeUndefined();
  });

  test('a bad value is a ConfigError naming PAYLOAD_KEYS that never prints the value', () => {
    const secret = b64(16);
    const err = configError({ PAYLOAD_KEYS: `k1:${secret}` });
    expect(err.issues).toEqual([{ variable: 'PAYLOAD_KEYS', message: expect.stringContaining('must be 32 bytes') }]);
    expect(err.message).not.toContain(secret);
  });

  test('it is one of the secret variables', async () => {
    const { SECRET_VARIABLES } = await import('../../../src/common/config');
    expect(SECRET_VARIABLES).toEqual(expect.arrayContaining(['PAYLOAD_KEYS', 'CODEC_AUTH_TOKEN']));
  });
});

describe('the key file and the keys in force', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payload-keys-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the launcher creates one key (mode 0600) on the first start and reuses it after', () => {
    const dataDir = path.join(dir, 'data');
    const first = ensurePayloadKeyFile(dataDir);
    expect(first).toMatchObject({ file: payloadKeyFile(dataDir), created: true });
    expect(parsePayloadKeys(first.keys)).toHaveLength(1);
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
    const second = ensurePayloadKeyFile(dataDir);
    expect(second).toEqual({ file: first.file, keys: first.keys, created: false });
  });

  test('PAYLOAD_KEYS wins over the key file', () => {
    ensurePayloadKeyFile(dir);
    const value = `env:${b64()}`;
    expect(payloadKeysInForce({ PAYLOAD_KEYS: value, DATA_DIR: dir })).toBe(value);
  });

  test('without PAYLOAD_KEYS, the data folder’s key file (as npm start left it)', () => {
    const { keys } = ensurePayloadKeyFile(dir);
    expect(payloadKeysInForce({ PAYLOAD_KEYS: undefined, DATA_DIR: dir })).toBe(keys);
    expect(payloadCodec({ PAYLOAD_KEYS: undefined, DATA_DIR: dir }).keyIds).toEqual([keys.split(':')[0]]);
  });

  test('with neither, the process refuses to start: a ConfigError naming PAYLOAD_KEYS and the file it looked for', () => {
    let err: unknown;
    try {
      payloadKeysInForce({ PAYLOAD_KEYS: undefined, DATA_DIR: dir });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues[0].variable).toBe('PAYLOAD_KEYS');
    expect((err as Error).message).toContain(path.join(dir, 'payload-keys'));
    // Only the launcher creates the file: nothing appeared here.
    expect(fs.existsSync(payloadKeyFile(dir))).toBe(false);
  });

  test('a damaged key file is a ConfigError naming the file, never its content', () => {
    const secret = b64(31);
    fs.writeFileSync(payloadKeyFile(dir), `k1:${secret}\n`);
    expect(() => payloadKeysInForce({ PAYLOAD_KEYS: undefined, DATA_DIR: dir })).toThrow(ConfigError);
    try {
      payloadKeysInForce({ PAYLOAD_KEYS: undefined, DATA_DIR: dir });
    } catch (e) {
      expect((e as Error).message).toContain(payloadKeyFile(dir));
      expect((e as Error).message).not.toContain(secret);
    }
  });
});
