import { generateKey, hashKey, parseApiKeys } from '../../../src/common/accounts/keys';

test('keys are stored as sha256 digests', () => {
  expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  expect(generateKey()).toMatch(/^ak_[A-Za-z0-9_-]{32}$/);
  expect(generateKey()).not.toBe(generateKey());
});

test('API_KEYS parses key:account pairs (keys may contain colons)', () => {
  expect(parseApiKeys(' a:alice , b:c:bob,')).toEqual([
    { key: 'a', account: 'alice' },
    { key: 'b:c', account: 'bob' },
  ]);
  expect(() => parseApiKeys('nocolon')).toThrow(/key:account/);
  expect(() => parseApiKeys('k:')).toThrow(/key:account/);
});
