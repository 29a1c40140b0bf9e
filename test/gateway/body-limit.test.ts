// An oversized request body is a 413 in the shared error shape, naming the
// limit (BODY_LIMIT_BYTES, 1 MiB by default), whether the client announced its
// length or streams it chunked, before any Temporal call is made.
import http from 'node:http';
import { API_KEY, serveApp, type ServedApp } from './serve-app';

const MiB = 1024 * 1024;
let app: ServedApp;

beforeAll(async () => {
  app = await serveApp();
});
afterAll(() => app.close());

const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

function expect413(status: number, body: any): void {
  expect(status).toBe(413);
  expect(body).toEqual({
    error: {
      type: 'payload_too_large',
      message: `request body exceeds the limit of ${MiB} bytes (1 MiB)`,
      details: { limit: MiB },
    },
  });
}

test('a body over 1 MiB with a Content-Length is 413 naming the limit', async () => {
  const r = await fetch(`${app.url}/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ message: 'x'.repeat(MiB + 10) }),
  });
  expect413(r.status, await r.json());
});

test('a chunked body that grows past the limit is 413 as well', async () => {
  const { status, body } = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request(
      `${app.url}/tasks/task_x`,
      { method: 'PATCH', headers: { ...headers, 'transfer-encoding': 'chunked' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.write('{"metadata": {"x": "');
    for (let i = 0; i < 12; i++) req.write('y'.repeat(100 * 1024));
    req.end('"}}');
  });
  expect413(status, body);
});

test('the limit is checked after the key: an anonymous oversized body is 401', async () => {
  const r = await fetch(`${app.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'x'.repeat(MiB + 10),
  });
  expect(r.status).toBe(401);
});

test('a smaller configured limit is the one named', async () => {
  const small = await serveApp({ BODY_LIMIT_BYTES: String(64 * 1024) });
  try {
    const r = await fetch(`${small.url}/`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'x'.repeat(100 * 1024) }),
    });
    expect(r.status).toBe(413);
    expect(((await r.json()) as any).error).toMatchObject({
      message: 'request body exceeds the limit of 65536 bytes (64 KiB)',
      details: { limit: 65536 },
    });
  } finally {
    await small.close();
  }
});
