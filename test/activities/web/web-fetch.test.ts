// web_fetch against the tests' local site (test/support/web-pages.ts), through the real outbound
// policy and its fetch: the site is allowed by its made-up name only (site.test, resolved by the
// test's resolver), so the private and link-local targets of its redirects stay refused, and a
// listener on such an address shows that nothing reached it.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OutboundPolicy, type Resolver } from '../../../src/common/outbound/policy';
import { policyFetch, type PolicyFetch } from '../../../src/common/outbound/fetch';
import { sessionWorkspace } from '../../../src/common/workspaces/layout';
import { webFetchTool, type WebFetchOptions } from '../../../activities/web/web-fetch';
import { ToolInputError } from '../../../activities/tools/builtin';
import { ARTICLE_WORDS, CHROME_WORDS, WEB_FETCH_PAGES } from '../../support/web-pages';
import { startWebSite, type WebSite } from '../../support/web-site';

const listen = async (server: http.Server, host: string) => {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
};

let site: WebSite;
let privateServer: http.Server;
let sitePort: number;
let privatePort: number;
let privateHits = 0;
const seen: http.IncomingHttpHeaders[] = [];
let fetch: PolicyFetch;
let dir: string;

const resolver: Resolver = async (host) => {
  const table: Record<string, string> = {
    'site.test': '127.0.0.1',
    'metadata.test': '169.254.169.254',
    'private.test': '127.0.0.2',
  };
  if (!table[host]) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address: table[host], family: 4 }];
};

beforeAll(async () => {
  site = await startWebSite({
    routes: {
      ...WEB_FETCH_PAGES,
      '/article': (req, res, ctx) => {
        seen.push(req.headers);
        return WEB_FETCH_PAGES['/article'](req, res, ctx);
      },
    },
  });
  sitePort = site.port;
  privateServer = http.createServer((_req, res) => {
    privateHits++;
    res.end('secret');
  });
  privatePort = await listen(privateServer, '127.0.0.2');
  fetch = policyFetch(new OutboundPolicy({ hosts: new Set(['site.test']), cidrs: [] }, resolver));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-fetch-'));
});

afterAll(async () => {
  await fetch.close();
  await site.close();
  privateServer.closeAllConnections();
  await new Promise((r) => privateServer.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

const ws = () => sessionWorkspace(dir, 'acct', 'sess');
const url = (p: string) => `http://site.test:${sitePort}${p}`;
const options = (o: Partial<WebFetchOptions> = {}): WebFetchOptions => ({
  fetch,
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 10_000,
  userAgent: 'TestAgent/1 (web_fetch test)',
  quota: { maxBytes: 1024 ** 3, maxFiles: 1000 },
  ...o,
});
const call = (args: Record<string, unknown>, o?: Partial<WebFetchOptions>, signal = new AbortController().signal) =>
  webFetchTool(options(o))(args, ws(), { signal });

describe('web_fetch: pages made readable', () => {
  test('an article in its chrome: markdown of the text with absolute links, title and URL first; no chrome', async () => {
    const r = await call({ url: url('/article') });
    expect(r.isError).toBeFalsy();
    expect(r.text.split('\n').slice(0, 2)).toEqual([`URL: ${url('/article')}`, 'Title: How barnacles hold on']);
    for (const w of ARTICLE_WORDS) expect(r.text).toContain(w);
    for (const w of CHROME_WORDS) expect(r.text).not.toContain(w);
    expect(r.text).toContain(`[the cement in detail](${url('/science/cement')})`);
    expect(seen.at(-1)?.['user-agent']).toBe('TestAgent/1 (web_fetch test)');
  });

  test('a redirect is followed, and the URL named is where the page came from', async () => {
    const r = await call({ url: url('/redirect-article'), format: 'text' });
    expect(r.text.startsWith(`URL: ${url('/article')}\n`)).toBe(true);
    expect(r.text).toContain('intertidal');
    expect(r.text).not.toContain('](');
  });

  test('a PDF is read as text, every page', async () => {
    const r = await call({ url: url('/report.pdf') });
    expect(r.isError).toBeFalsy();
    expect(r.text).toMatch(/High water at 06:12[\s\S]*Low water at 12:30/);
  });

  test('charsets: windows-1252 named by the header, Shift_JIS named by a meta tag', async () => {
    const cp = await call({ url: url('/cp1252-header'), format: 'text' });
    expect(cp.text).toContain('\u201cBonjour\u201d, dit le caf\u00e9');
    const sj = await call({ url: url('/sjis-meta'), format: 'text' });
    expect(sj.text).toContain('潮見');
  });

  test('JSON passes through; an image is saved to the workspace and named', async () => {
    expect((await call({ url: url('/data.json') })).text).toContain('{"tide":"high","at":"06:12"}');
    const img = await call({ url: url('/image.png') });
    expect(img.text).toMatch(
      /Not text \(image\/png, .*\): saved to \/workspace\/downloads\/site\.test-image-[0-9a-f]{8}\.png/,
    );
    expect(img.files).toHaveLength(1);
    const bytes = fs.readFileSync(path.join(ws().files, img.files![0]));
    expect(bytes.subarray(0, 4).toString('hex')).toBe('89504e47');
  });

  test('content only JavaScript renders is not seen (the browser sees it)', async () => {
    const r = await call({ url: url('/js-only') });
    expect(r.text).not.toContain('octopus');
    expect(r.text).not.toContain('getElementById');
  });

  test('an HTTP error is an answer the model reads: the status and the start of the page', async () => {
    const r = await call({ url: url('/not-found') });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('HTTP 404');
    expect(r.text).toContain('No such page here.');
  });
});

describe('web_fetch: caps', () => {
  test('a 20 MB page: 10 MB read, said so; the text cut at max_chars, the whole of it saved', async () => {
    const r = await call({ url: url('/huge'), max_chars: 5000 });
    expect(r.text).toContain('only its first 10.0 MiB were read');
    expect(r.text).toMatch(
      /Cut at 5000 of \d+ characters\. The whole text is in \/workspace\/downloads\/site\.test-huge-[0-9a-f]{8}\.md/,
    );
    const saved = fs.readFileSync(path.join(ws().files, r.files![0]), 'utf8');
    expect(saved.length).toBeGreaterThan(1_000_000);
    expect(r.text.length).toBeLessThan(5000 + 1000);
  });

  test('a workspace over its quota: the page still comes, cut, with a note that it could not be saved', async () => {
    const r = await call({ url: url('/article'), max_chars: 100 }, { quota: { maxBytes: 10, maxFiles: 1000 } });
    expect(r.text).toContain('Cut at 100 of');
    expect(r.text).toContain('could not be saved to the workspace');
    expect(r.files).toBeUndefined();
  });

  test('a page slower than the time limit is an error result', async () => {
    const r = await call({ url: url('/slow') }, { timeoutMs: 300 });
    expect(r).toEqual({ text: expect.stringMatching(/did not answer within 0\.3 s/), isError: true });
  });

  test('a cancelled call throws (the activity ends cancelled, with no answer)', async () => {
    const ac = new AbortController();
    const pending = call({ url: url('/slow') }, {}, ac.signal);
    setTimeout(() => ac.abort(), 100);
    await expect(pending).rejects.toThrow();
  });
});

describe('web_fetch: the outbound policy', () => {
  test.each([
    ['/redirect-metadata', /169\.254\.169\.254, a link-local address/],
    ['/redirect-metadata-name', /169\.254\.169\.254, a link-local address/],
  ])('a redirect to the metadata service (%s) is refused, nothing sent', async (p, why) => {
    const r = await call({ url: url(p) });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^Error: refused, nothing was sent: /);
    expect(r.text).toMatch(why);
  });

  test('a redirect to a private address, and that address asked directly: refused, the listener there got nothing', async () => {
    const to = encodeURIComponent(`http://private.test:${privatePort}/`);
    const viaRedirect = await call({ url: url(`/redirect-private?to=${to}`) });
    const direct = await call({ url: `http://127.0.0.2:${privatePort}/` });
    for (const r of [viaRedirect, direct]) {
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/refused, nothing was sent: .*127\.0\.0\.2, a loopback address/);
    }
    expect(privateHits).toBe(0);
  });

  test.each(['file:///etc/passwd', 'ftp://site.test/x', 'http://user:pw@site.test/'])('%s is refused', async (u) => {
    const r = await call({ url: u });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^Error: refused, nothing was sent: /);
    expect(r.text).not.toContain('pw@');
  });

  test('too many redirects is an answer; a refused connection is thrown for Temporal to retry', async () => {
    expect((await call({ url: url('/loop') })).text).toMatch(/^Error: too many redirects/);
    const closed = http.createServer();
    const port = await listen(closed, '127.0.0.1');
    await new Promise((r) => closed.close(r));
    await expect(call({ url: `http://site.test:${port}/` })).rejects.toThrow();
  });

  test('bad arguments are the model\u2019s errors', async () => {
    await expect(call({})).rejects.toThrow(ToolInputError);
    await expect(call({ url: url('/article'), format: 'pdf' })).rejects.toThrow(/format must be one of/);
    await expect(call({ url: url('/article'), max_chars: 5 })).rejects.toThrow(/max_chars/);
  });
});
