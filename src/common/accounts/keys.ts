// API keys are only ever stored as SHA-256 digests.
import { createHash, randomBytes } from 'node:crypto';

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random API key (shown once by the CLI, then only its hash exists). */
export function generateKey(): string {
  return `ak_${randomBytes(24).toString('base64url')}`;
}

/** API_KEYS: comma-separated `key:account` pairs. */
export function parseApiKeys(raw: string): { key: string; account: string }[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const i = pair.lastIndexOf(':');
      if (i <= 0 || i === pair.length - 1) throw new Error('API_KEYS entries must look like key:account');
      return { key: pair.slice(0, i), account: pair.slice(i + 1) };
    });
}
