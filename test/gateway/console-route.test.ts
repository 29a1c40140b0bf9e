// GET /console over real HTTP, on a console of the test's own (the real build is served in
// test/console/console.e2e.test.ts): the page with its security headers and the Web UI's address
// when TEMPORAL_UI_URL is set (escaped), assets cached for good, an unknown asset a JSON 404, no
// build a 404 that says how to build, CONSOLE=off a 404 that says so, and no key needed for any.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serveApp, type ServedApp } from './serve-app';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-dist-'));
const ASSET = 'console-ABC123.js';
fs.mkdirSync(path.join(dir, 'assets'));
fs.writeFileSync(
  path.join(dir, 'index.html'),
  `<!doctype html><html><head><script type="module" src="/console/assets/${ASSET}"></script></head><body></body></html>`,
);
fs.writeFileSync(path.join(dir, 'assets', ASSET), 'export {};\n');

const opened: ServedApp[] = [];
const serve = async (env: Record<string, string> = {}, consoleDir = dir) => {
  const app = await serveApp(env, () => ({ consoleDir }));
  opened.push(app);
  return app;
};

afterAll(async () => {
  await Promise.all(opened.map((a) => a.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the page: the strict policy, no caching, the Web UI link base escaped into a meta tag', async () => {
  const app = await serve({ TEMPORAL_UI_URL: 'http://ui.example:8233/?a="b"', TEMPORAL_NAMESPACE: 'ns one' });
  for (const path of ['/console', '/console/']) {
    const res = await fetch(`${app.url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy')!;
    for (const d of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(d);
    }
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain(
      '<meta name="temporal-ui" content="http://ui.example:8233/?a=&quot;b&quot;/namespaces/ns%20one/workflows/">',
    );
    expect(html).toContain(`/console/assets/${ASSET}`);
  }
});

test('assets: served as built, immutable; an unknown one is the API error shape', async () => {
  const app = await serve();
  const res = await fetch(`${app.url}/console/assets/${ASSET}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toContain('immutable');
  expect(res.headers.get('content-type')).toContain('javascript');
  expect(await res.text()).toBe('export {};\n');
  const missing = await fetch(`${app.url}/console/assets/none.js`);
  expect(missing.status).toBe(404);
  expect(((await missing.json()) as any).error.type).toBe('not_found');
});

test('no build: a 404 that says how to build it', async () => {
  const app = await serve({}, path.join(dir, 'none'));
  const res = await fetch(`${app.url}/console`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as any).error.message).toContain('console/build.ts');
});

test('CONSOLE=off: /console is a 404 that says why; the API is unchanged', async () => {
  const app = await serve({ CONSOLE: 'off' });
  const res = await fetch(`${app.url}/console`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as any).error.message).toContain('CONSOLE=off');
  expect((await fetch(`${app.url}/console/assets/x.js`)).status).toBe(404);
});
