// The payload codec: what it writes (an opaque envelope naming its key id),
// that it reads back what it wrote, key rotation, and what it refuses.
import { randomBytes } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import {
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  encodeToPayloads,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow';
import {
  AesGcmPayloadCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from '../../../src/common/codec/aes-gcm-codec';
import { codecDataConverter } from '../../../src/common/codec/data-converter';
import type { PayloadKey } from '../../../src/common/codec/keys';

const key = (id: string): PayloadKey => ({ id, key: randomBytes(32) });
const OLD = key('old');
const NEW = key('new');
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
const SECRET = 'the user said: my password is hunter2';
const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value)!;

test('encode wraps each payload in an envelope naming only the encoding and the key id', async () => {
  const codec = new AesGcmPayloadCodec([OLD]);
  const original = plain({ message: SECRET });
  const [encoded] = await codec.encode([original]);
  expect(Object.keys(encoded.metadata!).sort()).toEqual(['encoding', KEY_ID_METADATA]);
  expect(text(encoded.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
  expect(text(encoded.metadata![KEY_ID_METADATA])).toBe('old');
  // IV + the whole original Payload (metadata included) + tag.
  expect(encoded.data!.length).toBeGreaterThanOrEqual(12 + original.data!.length + 16);
});

test('no plaintext in the encoded bytes: neither the data nor its metadata', async () => {
  const codec = new AesGcmPayloadCodec([OLD]);
  const [encoded] = await codec.encode([plain({ message: SECRET })]);
  const bytes = Buffer.from(encoded.data!);
  for (const needle of ['hunter2', 'password', 'json/plain', 'message']) expect(bytes.includes(needle)).toBe(false);
  for (const v of Object.values(encoded.metadata!)) expect(text(v)).not.toContain('json');
});

test('round trip: decode gives back each payload as it was, in order', async () => {
  const codec = new AesGcmPayloadCodec([OLD]);
  const originals = [
    plain({ message: SECRET, n: [1, 2, 3] }),
    plain('x'.repeat(100_000)),
    plain(null),
    { metadata: { encoding: Buffer.from('binary/null') } },
  ];
  const decoded = await codec.decode(await codec.encode(originals));
  expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
    { message: SECRET, n: [1, 2, 3] },
    'x'.repeat(100_000),
    null,
    undefined,
  ]);
  expect(decoded.map((p) => text(p.metadata!.encoding))).toEqual(originals.map((p) => text(p.metadata!.encoding)));
});

test('each encryption draws a fresh IV: the same payload never encrypts to the same bytes', async () => {
  const codec = new AesGcmPayloadCodec([OLD]);
  const [a, b] = await codec.encode([plain(SECRET), plain(SECRET)]);
  expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
});

test('rotation: with a new key first, new data uses it and data under the old key still decodes', async () => {
  const before = await new AesGcmPayloadCodec([OLD]).encode([plain('written before the rotation')]);
  const rotated = new AesGcmPayloadCodec([NEW, OLD]);
  const after = await rotated.encode([plain('written after')]);
  expect(text(after[0].metadata![KEY_ID_METADATA])).toBe('new');
  const decoded = await rotated.decode([...before, ...after]);
  expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
    'written before the rotation',
    'written after',
  ]);
});

test('an unknown key id is a clear error naming that id, never a key', async () => {
  const [sealed] = await new AesGcmPayloadCodec([NEW]).encode([plain(SECRET)]);
  const err = await new AesGcmPayloadCodec([OLD]).decode([sealed]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PayloadDecryptionError);
  expect((err as Error).message).toContain('key id "new"');
  expect((err as Error).message).toContain('PAYLOAD_KEYS');
  for (const k of [OLD, NEW]) {
    expect((err as Error).message).not.toContain(k.key.toString('base64'));
    expect((err as Error).message).not.toContain(k.key.toString('hex'));
  }
});

test('a different key under a known id, or altered data, fails authentication', async () => {
  const [sealed] = await new AesGcmPayloadCodec([OLD]).encode([plain(SECRET)]);
  const impostor = new AesGcmPayloadCodec([{ id: 'old', key: randomBytes(32) }]);
  await expect(impostor.decode([sealed])).rejects.toThrow(/key id "old" does not decrypt/);
  const altered = Buffer.from(sealed.data!);
  altered[20] ^= 1;
  await expect(new AesGcmPayloadCodec([OLD]).decode([{ ...sealed, data: altered }])).rejects.toThrow(
    PayloadDecryptionError,
  );
  await expect(new AesGcmPayloadCodec([OLD]).decode([{ ...sealed, data: altered.subarray(0, 20) }])).rejects.toThrow(
    /truncated/,
  );
});

test('payloads that are not encrypted pass through decode unchanged', async () => {
  const codec = new AesGcmPayloadCodec([OLD]);
  const unencrypted = [plain({ written: 'before encryption' }), { metadata: {}, data: new Uint8Array([1, 2, 3]) }];
  const decoded = await codec.decode(unencrypted);
  expect(decoded[0]).toBe(unencrypted[0]);
  expect(decoded[1]).toBe(unencrypted[1]);
});

describe('as the data converter of a client or worker', () => {
  const converter = loadDataConverter(codecDataConverter(new AesGcmPayloadCodec([OLD])));

  test('values are encrypted on their way to Temporal', async () => {
    const [payload] = (await encodeToPayloads(converter, { message: SECRET }))!;
    expect(text(payload.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(payload.data!).includes('hunter2')).toBe(false);
  });

  test('failure messages and stack traces are encrypted too, and come back whole', async () => {
    const failure = await encodeErrorToFailure(
      converter,
      ApplicationFailure.nonRetryable(`model call failed: ${SECRET}`, 'ModelError'),
    );
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(JSON.stringify(failure)).not.toContain('hunter2');
    expect(text(failure.encodedAttributes!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    const error = await decodeOptionalFailureToOptionalError(converter, failure);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error!.message).toBe(`model call failed: ${SECRET}`);
    expect((error as ApplicationFailure).type).toBe('ModelError');
  });
});
