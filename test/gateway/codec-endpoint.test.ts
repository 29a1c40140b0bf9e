// The remote codec endpoint over real HTTP, as the Temporal Web UI and
// `temporal --codec-endpoint` call it: proto3-JSON payloads in and out, the
// operator token (header or path), CORS for the UI's origin, and off without
// a token.
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { API_KEY, serveApp, type ServedApp } from './serve-app';

const TOKEN = 'codec-token-0123456789abcdef';
const UI = 'http://localhost:8233';
let app: ServedApp;

beforeAll(async () => {
  app = await serveApp({ CODEC_AUTH_TOKEN: TOKEN });
});
afterAll(() => app.close());

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const value = (p: JsonPayload) => JSON.parse(Buffer.from(p.data, 'base64').toString('utf8'));
const meta = (p: JsonPayload, k: string) => Buffer.from(p.metadata[k] ?? '', 'base64').toString('utf8');

function post(path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  return fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const SECRET = { message: 'my card number is 4111 1111 1111 1111' };

test('encode then decode is a round trip; what encode returns is ciphertext under the service key', async () => {
  const original = toJson(defaultPayloadConverter.toPayload(SECRET)!);
  const enc = await post('/codec/encode', { payloads: [original] });
  expect(enc.status).toBe(200);
  expect(enc.headers.get('content-type')).toMatch(/^application\/json/);
  const encoded = (await enc.json()) as { payloads: JsonPayload[] };
  expect(meta(encoded.payloads[0], 'encoding')).toBe('binary/encrypted');
  expect(meta(encoded.payloads[0], 'encryption-key-id')).toBe('k1');
  expect(Buffer.from(encoded.payloads[0].data, 'base64').includes('4111')).toBe(false);

  const dec = await post('/codec/decode', encoded);
  expect(dec.status).toBe(200);
  const decoded = (await dec.json()) as { payloads: JsonPayload[] };
  expect(decoded.payloads).toEqual([original]);
  expect(value(decoded.payloads[0])).toEqual(SECRET);
});

test('decode reads what the service’s own clients wrote, and passes unencrypted payloads through', async () => {
  const [sealed, sealedUndefined] = await app.codec.encode([
    defaultPayloadConverter.toPayload(SECRET)!,
    defaultPayloadConverter.toPayload(undefined)!,
  ]);
  const plain = toJson(defaultPayloadConverter.toPayload('written before encryption')!);
  const r = await post('/codec/decode', { payloads: [toJson(sealed), plain, toJson(sealedUndefined)] });
  expect(r.status).toBe(200);
  const body = (await r.json()) as { payloads: JsonPayload[] };
  expect(body.payloads.slice(0, 2).map(value)).toEqual([SECRET, 'written before encryption']);
  expect(meta(body.payloads[0], 'encoding')).toBe('json/plain');
  // An undefined value: a payload with no data at all.
  expect(body.payloads[2]).toEqual({ metadata: { encoding: Buffer.from('binary/null').toString('base64') }, data: '' });
});

test('no payloads: proto3 JSON leaves the empty list out, as the temporal CLI sends it', async () => {
  for (const op of ['decode', 'encode']) {
    const r = await post(`/codec/${op}`, {});
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ payloads: [] });
  }
});

test('the Web UI form: the token as the path segment before decode (it cannot send a header)', async () => {
  const [sealed] = await app.codec.encode([defaultPayloadConverter.toPayload(SECRET)!]);
  const r = await post(`/codec/${TOKEN}/decode`, { payloads: [toJson(sealed)] }, { 'x-namespace': 'default' });
  expect(r.status).toBe(200);
  expect(((await r.json()) as { payloads: JsonPayload[] }).payloads.map(value)).toEqual([SECRET]);
});

test('401 without the token, with a wrong one, or with an account’s API key; the error names no token', async () => {
  const body = { payloads: [] };
  for (const headers of <Record<string, string>[]>[
    {},
    { authorization: 'Bearer wrong-token-0123456789' },
    { authorization: `Bearer ${API_KEY}` },
    { authorization: TOKEN },
  ]) {
    const r = await post('/codec/decode', body, headers);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const text = await r.text();
    expect(JSON.parse(text).error.type).toBe('unauthorized');
    expect(text).not.toContain(TOKEN);
  }
  expect((await post('/codec/wrong-token-0123456789/decode', body, {})).status).toBe(401);
  expect((await post('/codec/decode', body)).status).toBe(200);
});

test('CORS preflight from the Web UI’s origin: allowed, with Authorization, Content-Type and X-Namespace; no token needed', async () => {
  const r = await fetch(`${app.url}/codec/decode`, {
    method: 'OPTIONS',
    headers: {
      origin: UI,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,x-namespace',
    },
  });
  expect(r.status).toBe(204);
  expect(r.headers.get('access-control-allow-origin')).toBe(UI);
  expect(r.headers.get('access-control-allow-methods')).toContain('POST');
  const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
  expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-namespace']));
  expect(r.headers.get('vary')).toMatch(/Origin/);

  // The actual request carries the origin's permission too.
  const post2 = await post('/codec/decode', { payloads: [] }, { authorization: `Bearer ${TOKEN}`, origin: UI });
  expect(post2.headers.get('access-control-allow-origin')).toBe(UI);
});

test('another origin gets no CORS permission (the browser then refuses it)', async () => {
  const r = await fetch(`${app.url}/codec/decode`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  expect(r.headers.get('access-control-allow-origin')).toBeNull();
  const p = await post(
    '/codec/decode',
    { payloads: [] },
    { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
  );
  expect(p.headers.get('access-control-allow-origin')).toBeNull();
});

test('an unknown key id is a 400 naming it; malformed bodies are 400, other media types 415', async () => {
  const foreign = {
    metadata: {
      encoding: Buffer.from('binary/encrypted').toString('base64'),
      'encryption-key-id': Buffer.from('retired').toString('base64'),
    },
    data: Buffer.alloc(40).toString('base64'),
  };
  const r = await post('/codec/decode', { payloads: [foreign] });
  expect(r.status).toBe(400);
  expect(((await r.json()) as any).error).toMatchObject({
    type: 'invalid_request',
    message: expect.stringContaining('key id "retired"'),
  });

  expect((await post('/codec/decode', { payloads: [{ data: '***' }] })).status).toBe(400);
  expect((await post('/codec/decode', { payloads: 'x' })).status).toBe(400);
  expect((await post('/codec/decode', '{not json')).status).toBe(400);
  expect(
    (await post('/codec/decode', 'x', { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' })).status,
  ).toBe(415);
});

test('only POST /codec/encode and /codec/decode exist', async () => {
  expect((await fetch(`${app.url}/codec/decode`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  expect((await post('/codec/compress', { payloads: [] })).status).toBe(404);
  expect((await post('/codec/a/b/decode', { payloads: [] })).status).toBe(404);
});

test('without CODEC_AUTH_TOKEN the endpoint is off: 404 saying so, whatever is sent', async () => {
  const off = await serveApp();
  try {
    const r = await fetch(`${off.url}/codec/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{"payloads":[]}',
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).error.message).toContain('CODEC_AUTH_TOKEN');
  } finally {
    await off.close();
  }
});
