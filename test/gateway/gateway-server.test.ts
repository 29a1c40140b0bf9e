// What the gateway's HTTP server answers before any route sees a request: a
// header section past HEADER_LIMIT_BYTES is a 431, and a request Node cannot
// parse a 400, both in the API's JSON error shape (Node alone would send a
// bare status line). OPTIONS lists a path's methods for the whole app.
import net from 'node:net';
import { HEADER_LIMIT_BYTES } from '../../src/gateway/gateway-server';
import { API_KEY, serveApp, type ServedApp } from './serve-app';

let app: ServedApp;

beforeAll(async () => {
  app = await serveApp();
});
afterAll(() => app.close());

/** Writes `raw` on a fresh connection and reads the answer until the server closes it. */
function rawRequest(raw: string): Promise<string> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(raw));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

test('a URL past the header limit is a JSON 431 naming the limit, not retryable', async () => {
  const r = await fetch(`${app.url}/tasks?cursor=${'a'.repeat(HEADER_LIMIT_BYTES)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  expect(r.status).toBe(431);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.headers.get('x-should-retry')).toBe('false');
  expect(await r.json()).toEqual({
    error: {
      type: 'headers_too_large',
      message: `the request's headers, its URL included, exceed ${HEADER_LIMIT_BYTES / 1024} KiB`,
      details: { limit: HEADER_LIMIT_BYTES },
    },
  });
});

test('a request line Node cannot parse is a JSON 400 at header', async () => {
  const answer = await rawRequest('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Name: y\r\n\r\n');
  const [head, body] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  expect(head).toContain('Content-Type: application/json');
  const parsed = JSON.parse(body) as { error: { type: string; details: { path: string; code: string }[] } };
  expect(parsed.error.type).toBe('invalid_request');
  expect(parsed.error.details).toEqual([expect.objectContaining({ path: 'header', code: 'malformed_http' })]);
});

test('OPTIONS lists every method of a path, however many routers serve it (POST /datastores comes first from the upload router)', async () => {
  const r = await fetch(`${app.url}/datastores`, { method: 'OPTIONS' });
  expect([r.status, r.headers.get('allow')]).toEqual([204, 'GET, POST']);
  const unknown = await fetch(`${app.url}/nowhere`, { method: 'OPTIONS' });
  expect(unknown.status).toBe(404);
  expect(((await unknown.json()) as { error: { type: string } }).error.type).toBe('not_found');
});
