// The API version of a request, decided once (src/gateway/middleware/api-version.ts): the
// API-Version header, else the deployment's API_VERSION; every answer of the API
// says which version answered; an unknown version is a 400 naming the header;
// a version marked deprecated in API_VERSION_DEPRECATIONS answers with
// Deprecation and Sunset. The probes are not versioned.
import { LATEST_VERSION } from '../../src/common/api-versions';
import { API_KEY, serveApp, type ServedApp } from './serve-app';

let plain: ServedApp;
let deprecated: ServedApp;

beforeAll(async () => {
  plain = await serveApp();
  deprecated = await serveApp({
    API_VERSION: LATEST_VERSION,
    API_VERSION_DEPRECATIONS: `${LATEST_VERSION}:2027-01-15:2027-07-15`,
  });
});
afterAll(async () => {
  await plain?.close();
  await deprecated?.close();
});

/** An answer of the versioned API that needs no Temporal: an unknown path, a 404. */
const ask = (app: ServedApp, headers: Record<string, string> = {}) =>
  fetch(`${app.url}/nowhere`, { headers: { authorization: `Bearer ${API_KEY}`, ...headers } });

test("without API-Version the deployment's version answers, and says so; with it, that version", async () => {
  const r = await ask(plain);
  expect([r.status, r.headers.get('api-version')]).toEqual([404, LATEST_VERSION]);
  expect((await ask(plain, { 'api-version': LATEST_VERSION })).headers.get('api-version')).toBe(LATEST_VERSION);
  const unauthenticated = await fetch(`${plain.url}/tasks`);
  expect([unauthenticated.status, unauthenticated.headers.get('api-version')]).toEqual([401, LATEST_VERSION]);
});

test("a version this service does not have is a 400 naming the header and the versions it has, answered in the deployment's", async () => {
  for (const asked of ['2025-01-01', 'latest', '']) {
    const r = await ask(plain, { 'api-version': asked });
    const body = (await r.json()) as {
      error: { type: string; message: string; details: { path: string; code: string }[] };
    };
    expect([asked, r.status, r.headers.get('api-version')]).toEqual([asked, 400, LATEST_VERSION]);
    expect(body.error.details).toEqual([
      expect.objectContaining({ path: 'header.API-Version', code: 'unknown_version' }),
    ]);
    expect(body.error.message).toContain(LATEST_VERSION);
  }
});

test('a version marked deprecated answers with Deprecation (RFC 9745) and Sunset (RFC 8594); one that is not, with neither', async () => {
  const r = await ask(deprecated, { 'api-version': LATEST_VERSION });
  expect(r.headers.get('deprecation')).toBe(`@${Date.parse('2027-01-15T00:00:00Z') / 1000}`);
  expect(r.headers.get('sunset')).toBe('Thu, 15 Jul 2027 00:00:00 GMT');
  // Errors too: the version is the answer's, whatever its status.
  const bad = await fetch(`${deprecated.url}/tasks?limit=0`, { headers: { authorization: `Bearer ${API_KEY}` } });
  expect([bad.status, bad.headers.get('deprecation'), bad.headers.get('api-version')]).toEqual([
    400,
    expect.stringMatching(/^@\d+$/),
    LATEST_VERSION,
  ]);
  const current = await ask(plain);
  expect([current.headers.get('deprecation'), current.headers.get('sunset')]).toEqual([null, null]);
});

test('the probes and the document are not versioned', async () => {
  for (const p of ['/healthz', '/openapi.json']) {
    const r = await fetch(`${plain.url}${p}`, { headers: { 'api-version': 'not-a-version' } });
    expect([p, r.status, r.headers.get('api-version')]).toEqual([p, 200, null]);
  }
});
