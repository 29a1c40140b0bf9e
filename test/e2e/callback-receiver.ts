// A callback receiver for the tests: a real HTTP server that records every
// delivery and answers as each path says, and an independent Standard
// Webhooks verifier written from the specification (not the service's code).
import http from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  answered: number;
}

/** What a path answers: a status, or a function of the delivery and how often its webhook-id was seen. */
export type Answer = number | ((d: Delivery, seen: number) => number);

export interface Receiver {
  url(path: string): string;
  deliveries: Delivery[];
  /** The deliveries the receiver accepted (2xx), in arrival order. */
  accepted(path: string): Delivery[];
  answer(path: string, a: Answer): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const answers = new Map<string, Answer>();
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const id = String(req.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        /* recorded as is */
      }
      const d: Delivery = { path, headers: req.headers, body, json, answered: 0 };
      const a = answers.get(path) ?? 200;
      d.answered = typeof a === 'number' ? a : a(d, seen.get(id)!);
      deliveries.push(d);
      res.writeHead(d.answered, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${base}${path}`,
    deliveries,
    accepted: (path) => deliveries.filter((d) => d.path === path && d.answered >= 200 && d.answered < 300),
    answer: (path, a) => void answers.set(path, a),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Standard Webhooks verification: the signed content is `id.timestamp.body`,
 * HMAC-SHA256 keyed with the base64 secret after `whsec_`, sent as
 * `v1,<base64>` entries separated by spaces; the timestamp must be recent.
 * Returns the secrets (of those given) that signed the delivery.
 */
export function verifiedBy(d: Delivery, secrets: string[], toleranceSeconds = 300): string[] {
  const id = String(d.headers['webhook-id'] ?? '');
  const ts = Number(d.headers['webhook-timestamp']);
  if (!id || !Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > toleranceSeconds) return [];
  const given = String(d.headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  return secrets.filter((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${ts}.${d.body}`).digest();
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  });
}
