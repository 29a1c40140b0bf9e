// Sealed secrets: ciphertext that only the keys that sealed it open.
import { generatePayloadKey } from '../../../src/common/codec/keys';
import { codecFromKeys } from '../../../src/common/codec/data-converter';
import { isSealed, SealedSecretError, sealSecret, unsealSecret } from '../../../src/common/codec/sealed-secret';

const codec = codecFromKeys(generatePayloadKey());

test('a sealed value opens to itself and shows nothing of it', async () => {
  const value = { connection_url: 'postgres://agent:hunter2-secret@db.example:5432/shop' };
  const sealed = await sealSecret(codec, value);
  expect(isSealed(sealed)).toBe(true);
  expect(sealed).not.toMatch(/hunter2|db\.example|agent/);
  expect(await unsealSecret(codec, sealed)).toEqual(value);
});

test('other keys, damage and plain text are refused without quoting the text', async () => {
  const sealed = await sealSecret(codec, 'x');
  await expect(unsealSecret(codecFromKeys(generatePayloadKey()), sealed)).rejects.toThrow(SealedSecretError);
  await expect(unsealSecret(codec, sealed.slice(0, -8) + 'AAAAAAAA')).rejects.toThrow(SealedSecretError);
  await expect(unsealSecret(codec, 'postgres://a:b@c/d')).rejects.toThrow(/^not a sealed secret$/);
});
