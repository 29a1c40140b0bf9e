// The browser tools on a real Chromium (Debian's /usr/bin/chromium) against a local test site.
// The site is on 127.0.0.1, which the outbound policy refuses; the policy here resolves the made-up
// name site.test to it and allowlists that NAME only, so the site is reached by name while
// 127.0.0.1 and 169.254.169.254 by IP literal stay refused. A second site plays the "private"
// server: by its hits, a test proves that nothing reached it.
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BrowserService, type BrowserOptions } from '../../../activities/browser/browser-service';
import { OutboundPolicy, type Resolver } from '../../../src/common/outbound/policy';
import { waitUntil } from '../../support/wait-until';
import { sendHtml, startWebSite, type Route, type WebSite } from '../../support/web-site';

const resolver: Resolver = async (host) => {
  if (host === 'site.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};
const policy = new OutboundPolicy('site.test', resolver);

let site: WebSite;
let secret: WebSite;
let slowAnswered = false;
let dir: string;
let files: string;
let service: BrowserService;
const services: BrowserService[] = [];

const at = (p: string) => `http://site.test:${site.port}${p}`;
const secretUrl = () => `http://127.0.0.1:${secret.port}/secret`;

function newService(opts: Partial<BrowserOptions> = {}): BrowserService {
  const s = new BrowserService({ policy, maxContexts: 4, idleCloseMs: 60_000, navigationTimeoutMs: 15_000, ...opts });
  services.push(s);
  return s;
}

function call(session: string, tool: string, args: Record<string, unknown> = {}, on = service, signal?: AbortSignal) {
  return on.call(session, tool, args, { signal: signal ?? new AbortController().signal, workspaceFiles: files });
}

/** The ref of the element of `role` named `name` in a result's snapshot. */
function refOf(text: string, role: string, name: string): string {
  const m = new RegExp(`${role} "${name}"[^\\n]*\\[ref=((?:f\\d+)?e\\d+)\\]`).exec(text);
  if (!m) throw new Error(`no ${role} "${name}" in:\n${text}`);
  return m[1];
}

/** The pids of the Chromium processes this test process started (its direct children). */
function chromiumPids(): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat)!;
      if (comm.startsWith('chromium') && Number(rest.split(' ')[1]) === process.pid) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

// Tries every way a page has to open a connection of its own to 127.0.0.1:<port> (TCP and UDP),
// then shows "Done:" and what it saw.
const sockets: Route = (_req, res, ctx) => {
  const port = Number(ctx.url.searchParams.get('port'));
  const ice = ['stun:', 'turn:'].map((s) => `${s}127.0.0.1:${port}`);
  const script =
    'const seen = [];' +
    `try { const ws = new WebSocket('ws://127.0.0.1:${port}/'); ws.onerror = () => seen.push('ws error'); } catch (e) { seen.push('ws ' + e); }` +
    `const pc = new RTCPeerConnection({ iceServers: [{ urls: '${ice[0]}' }, { urls: ['${ice[1]}?transport=udp', '${ice[1]}?transport=tcp'], username: 'u', credential: 'c' }] });` +
    "pc.createDataChannel('x'); pc.onicecandidate = (e) => seen.push('candidate ' + (e.candidate ? e.candidate.type : 'end'));" +
    'pc.createOffer().then((o) => pc.setLocalDescription(o));' +
    "setTimeout(() => { document.body.append('Done: ' + seen.join(', ')); }, 3000);";
  sendHtml(res, 'Sockets', `<p>Trying</p><script>${script}</script>`);
};

beforeAll(async () => {
  const slow: Route = (_req, res, ctx) =>
    ctx.later(30_000, () => {
      slowAnswered = true;
      res.end('slow');
    });
  site = await startWebSite({ routes: { '/slow': slow, '/sockets': sockets } });
  secret = await startWebSite();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-e2e-'));
  files = path.join(dir, 'files');
  fs.mkdirSync(files);
  service = newService();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  await site?.close();
  await secret?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('navigate answers a snapshot with the text a script rendered', async () => {
  const r = await call('s1', 'browser_navigate', { url: at('/js-only') });
  expect(r.isError).toBeFalsy();
  expect(r.text).toContain('Rendered by script: purple-otter');
  expect(r.text).toContain(`Page URL: ${at('/js-only')}`);
  const snap = await call('s1', 'browser_snapshot');
  expect(snap.text).toContain('purple-otter');
});

test('a form is filled and submitted through the refs of the snapshot', async () => {
  const form = await call('s1', 'browser_navigate', { url: at('/form') });
  const typed = await call('s1', 'browser_type', {
    element: 'name field',
    ref: refOf(form.text, 'textbox', 'Your name'),
    text: 'Ada Lovelace',
  });
  expect(typed.isError).toBeFalsy();
  const chosen = await call('s1', 'browser_select_option', {
    element: 'colour',
    ref: refOf(typed.text, 'combobox', 'Colour'),
    values: ['green'],
  });
  expect(chosen.isError).toBeFalsy();
  const sent = await call('s1', 'browser_click', { element: 'Send', ref: refOf(chosen.text, 'button', 'Send') });
  expect(sent.text).toContain('Submitted: name=Ada Lovelace, colour=green');

  // Enter in the field submits too (type with submit), after going back to the form.
  const back = await call('s1', 'browser_navigate_back');
  expect(back.text).toContain('Contact form');
  const submitted = await call('s1', 'browser_type', {
    element: 'name field',
    ref: refOf(back.text, 'textbox', 'Your name'),
    text: 'Grace',
    submit: true,
  });
  expect(submitted.text).toMatch(/Submitted: name=Grace, colour=(red|green)/);
});

test('a ref that is not in the snapshot is an error the model can act on', async () => {
  await call('s1', 'browser_navigate', { url: at('/form') });
  const r = await call('s1', 'browser_click', { element: 'ghost', ref: 'e999' });
  expect(r).toMatchObject({ isError: true });
  expect(r.text).toMatch(/No element has the ref e999.*browser_snapshot/);
  const bad = await call('s1', 'browser_hover', { element: 'x', ref: 'button' });
  expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('is not a ref') });
});

test('a screenshot lands in the workspace as a PNG, named in the result and in files', async () => {
  const page = await call('s1', 'browser_navigate', { url: at('/picture') });
  const r = await call('s1', 'browser_take_screenshot', { filename: 'shapes.png', fullPage: true });
  expect(r).toMatchObject({ files: ['screenshots/shapes.png'] });
  expect(r.text).toContain('/workspace/screenshots/shapes.png');
  const png = fs.readFileSync(path.join(files, 'screenshots/shapes.png'));
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

  const el = await call('s1', 'browser_take_screenshot', { element: 'shapes', ref: refOf(page.text, 'img', 'Shapes') });
  expect(el.files).toHaveLength(1);
  expect(el.files![0]).toMatch(/^screenshots\/page-.*\.png$/);
  expect(fs.statSync(path.join(files, el.files![0])).size).toBeGreaterThan(100);
});

test('a screenshot is not written through a link that leads out of the workspace', async () => {
  const outside = path.join(dir, 'outside');
  fs.mkdirSync(outside);
  fs.rmSync(path.join(files, 'screenshots'), { recursive: true, force: true });
  fs.symlinkSync(outside, path.join(files, 'screenshots'));
  try {
    await call('s1', 'browser_navigate', { url: at('/picture') });
    const r = await call('s1', 'browser_take_screenshot', { filename: 'escape.png' });
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining('could not be saved') });
    expect(fs.readdirSync(outside)).toEqual([]);
  } finally {
    fs.rmSync(path.join(files, 'screenshots'));
  }
});

test('a download goes to the workspace', async () => {
  const page = await call('s1', 'browser_navigate', { url: at('/download') });
  const r = await call('s1', 'browser_click', {
    element: 'report link',
    ref: refOf(page.text, 'link', 'Get the report'),
  });
  expect(r.files).toEqual(['downloads/report.txt']);
  expect(fs.readFileSync(path.join(files, 'downloads/report.txt'), 'utf8')).toBe('quarterly report\n');
  // Opened directly, the file is downloaded too, next to the first rather than over it.
  const direct = await call('s1', 'browser_navigate', { url: at('/download/report.txt') });
  expect(direct).toMatchObject({ files: ['downloads/report-1.txt'] });
  expect(direct.isError).toBeFalsy();
});

test('two sessions do not share cookies', async () => {
  await call('alice', 'browser_navigate', { url: at('/cookie/set?value=alpha') });
  const a = await call('alice', 'browser_navigate', { url: at('/cookie/show') });
  expect(a.text).toContain('Cookies received: marker=alpha');
  const b = await call('bob', 'browser_navigate', { url: at('/cookie/show') });
  expect(b.text).toContain('Cookies received: (none)');
});

describe('the outbound policy', () => {
  test('a redirect to the metadata service is refused, naming why', async () => {
    const r = await call('s2', 'browser_navigate', { url: at('/redirect-metadata') });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('169.254.169.254');
    expect(r.text).toContain('link-local');
    expect(site.hits).toContain('/redirect-metadata');
  });

  test('a redirect to a loopback server never reaches it', async () => {
    const r = await call('s2', 'browser_navigate', { url: at(`/redirect?to=${encodeURIComponent(secretUrl())}`) });
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining('loopback') });
    expect(secret.hits).toEqual([]);
  });

  test("a page's script cannot fetch from a loopback server", async () => {
    const url = at(`/fetch-private?target=${encodeURIComponent(secretUrl())}`);
    const r = await call('s2', 'browser_navigate', { url });
    expect(r.isError).toBeFalsy();
    const waited = await call('s2', 'browser_wait_for', { text: 'Fetch failed' });
    expect(waited.isError).toBeFalsy();
    // The refusal was the proxy's (not only Chromium's own rules): it is named in one of the results.
    expect(`${r.text}\n${waited.text}`).toContain(`127.0.0.1:${secret.port}: `);
    expect(secret.hits).toEqual([]);
  });

  test("a page's WebSocket and WebRTC (STUN, TURN over UDP and TCP) reach no local listener", async () => {
    const udp = dgram.createSocket('udp4');
    let datagrams = 0;
    udp.on('message', () => datagrams++);
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const port = udp.address().port;
    let connections = 0;
    const tcp = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', resolve));
    try {
      await call('s2', 'browser_navigate', { url: at(`/sockets?port=${port}`) });
      const r = await call('s2', 'browser_wait_for', { text: 'Done:' });
      expect(r.text).toContain('Done:');
      expect(datagrams).toBe(0);
      expect(connections).toBe(0);
    } finally {
      udp.close();
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  test('addresses by IP literal and other schemes are refused before the browser tries', async () => {
    const lo = await call('s2', 'browser_navigate', { url: secretUrl() });
    expect(lo).toMatchObject({ isError: true, text: expect.stringContaining('refused by the outbound policy') });
    const file = await call('s2', 'browser_navigate', { url: 'file:///etc/passwd' });
    expect(file).toMatchObject({ isError: true, text: expect.stringContaining('Only http and https') });
    expect(secret.hits).toEqual([]);
  });
});

test('aborting the signal during a slow navigation ends the call before the page answers', async () => {
  const ac = new AbortController();
  const pending = call('s3', 'browser_navigate', { url: at('/slow') }, service, ac.signal);
  await waitUntil('the site to receive /slow', () => site.hits.includes('/slow'));
  ac.abort();
  await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  // Before the page answered (30 s): the call did not wait for the navigation.
  expect(slowAnswered).toBe(false);
  // The session goes on.
  const next = await call('s3', 'browser_navigate', { url: at('/js-only') });
  expect(next.text).toContain('purple-otter');
});

test('after Chromium is killed, the next call says the browser restarted and the one after works', async () => {
  const svc = newService();
  await call('k', 'browser_navigate', { url: at('/js-only') }, svc);
  const before = chromiumPids();
  expect(before.length).toBeGreaterThan(0);
  for (const pid of before) process.kill(pid, 'SIGKILL');
  await waitUntil('the service to see the browser gone', () => !svc.stats.browserRunning);
  const r = await call('k', 'browser_snapshot', {}, svc);
  expect(r).toMatchObject({ isError: true, text: expect.stringContaining('restarted') });
  const again = await call('k', 'browser_navigate', { url: at('/js-only') }, svc);
  expect(again.isError).toBeFalsy();
  expect(again.text).toContain('purple-otter');
  expect(svc.stats.browserRunning).toBe(true);
});

test("beyond maxContexts the least recently used session's context is closed", async () => {
  const svc = newService({ maxContexts: 1 });
  await call('first', 'browser_navigate', { url: at('/cookie/set?value=one') }, svc);
  await call('second', 'browser_navigate', { url: at('/js-only') }, svc);
  expect(svc.stats.contexts).toBe(1);
  const r = await call('first', 'browser_navigate', { url: at('/cookie/show') }, svc);
  expect(r.text).toContain('closed to make room');
  expect(r.text).toContain('Cookies received: (none)');
  expect(svc.stats.contexts).toBe(1);
});

test('an unused context is closed after idleCloseMs', async () => {
  const svc = newService({ idleCloseMs: 300 });
  await call('idle', 'browser_navigate', { url: at('/js-only') }, svc);
  await waitUntil('the idle context to close', () => svc.stats.contexts === 0);
  const r = await call('idle', 'browser_navigate', { url: at('/js-only') }, svc);
  expect(r.text).toContain('unused');
});
