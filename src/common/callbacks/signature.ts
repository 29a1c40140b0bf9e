// Standard Webhooks signing (https://www.standardwebhooks.com): a delivery
// carries `webhook-id` (the same on every retry of it), `webhook-timestamp`
// (seconds, per attempt) and `webhook-signature`, one `v1,<base64 HMAC-SHA256
// of "id.timestamp.body">` per secret in force (two during a rotation's 24 h),
// space-separated. Secrets are `whsec_` + base64 of 32 random bytes.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** The `webhook-signature` header value for this id, timestamp and body under each secret. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets
    .map(
      (s) => `v1,${createHmac('sha256', secretBytes(s)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`,
    )
    .join(' ');
}

// Headers a request's `callback.headers` cannot set: hop-by-hop headers (RFC 9110 7.6.1),
// what the body and the connection decide, and the signature's own.
export const RESERVED_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
] as const;
const RESERVED = new Set<string>(RESERVED_HEADERS);

/** A delivery's headers: the request's own (less the reserved ones), then the body type and the signature. */
export function deliveryHeaders(
  given: Record<string, string>,
  id: string,
  timestampSeconds: number,
  signature: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(given)) if (!RESERVED.has(k.toLowerCase())) out[k] = v;
  return {
    ...out,
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature,
  };
}
