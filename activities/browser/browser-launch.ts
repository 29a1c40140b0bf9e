// How the worker's one Chromium is started so that nothing it sends can go around the outbound
// policy. Each session's context gets a proxy of its own (browser-session.ts) that applies the
// policy; the browser itself is launched with a proxy that refuses everything, because traffic
// that belongs to no context (component updates, sign-in checks, safe browsing) is never the
// agent's and must not leave at all. On top of the proxies:
//   - `--proxy-bypass-list=<-loopback>`: Chromium otherwise sends localhost and 127.0.0.1 directly;
//   - `--host-resolver-rules`: every name resolves to nothing inside Chromium, so nothing it does
//     by itself (DNS prefetch, a feature that connects without the proxy) can reach a host by
//     name; proxied requests are unaffected, since the proxy resolves (and checks) the name;
//   - WebRTC may not use UDP outside the proxy (a STUN or peer connection would otherwise go
//     straight to any address), QUIC is off (UDP too), and DNS prefetching is off.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium: the binary itself when it is there. /usr/bin/chromium is a shell script that
 * adds Google API keys (which turn on calls to Google's services: autofill queries and others),
 * loads extensions and allows remote ones; the browser of an agent wants none of it.
 */
export function defaultChromium(): string {
  const binary = '/usr/lib/chromium/chromium';
  return fs.existsSync(binary) ? binary : '/usr/bin/chromium';
}

/** Loopback, which Chromium would otherwise never send to a proxy. */
export const PROXY_BYPASS = '<-loopback>';

/**
 * Chromium features turned off. Chromium honours only the LAST --disable-features switch, and
 * Playwright passes one of its own before ours, so this list repeats the features Playwright
 * 1.65 turns off (kept as they are: tests rely on them) and adds ours. Re-check it when
 * playwright-core is upgraded (its chromiumSwitches).
 */
const DISABLED_FEATURES = [
  // Playwright 1.65's: http navigations stay http (no https attempt first), no preconnect or
  // queries to Google at start (search, network time, optimisation hints), and behaviours its
  // automation relies on.
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  // Ours: forms the agent fills are not described to Google's autofill servers (a session's
  // context would send those queries through its proxy, to a public address the policy allows).
  'AutofillServerCommunication',
];

/** The switches added to Playwright's own (which already turn off background networking, component updates, sync). */
export const HARDENING_ARGS: readonly string[] = [
  `--disable-features=${DISABLED_FEATURES.join(',')}`,
  // The proxies are at the IP literal 127.0.0.1, which no rule maps; every name maps to nothing.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-quic',
  '--dns-prefetch-disable',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--no-pings',
  // No permission prompt can wait for a person who is not there (camera, location, notifications).
  '--deny-permission-prompts',
];

export interface LaunchOptions {
  executablePath: string;
  /** The proxy of traffic outside any context (a refusing one). */
  proxyUrl: string;
  /** Chromium's own sandbox of its renderers; it cannot run as root. */
  sandbox: boolean;
  timeoutMs: number;
}

export async function launchChromium(opts: LaunchOptions): Promise<Browser> {
  return chromium.launch({
    executablePath: opts.executablePath,
    headless: true,
    chromiumSandbox: opts.sandbox,
    proxy: { server: opts.proxyUrl, bypass: PROXY_BYPASS },
    args: [...HARDENING_ARGS],
    timeout: opts.timeoutMs,
    // The worker's environment holds its secrets: the browser gets only what it needs to run.
    env: pickEnv(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'FONTCONFIG_PATH', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME']),
    // The worker handles its own signals and closes the browser (BrowserService.close).
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}

function pickEnv(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const n of names) if (process.env[n] !== undefined) env[n] = process.env[n]!;
  return env;
}

export interface RefusingProxy {
  url: string;
  /** host:port of each request refused so far (for logs), the most recent last, at most 100. */
  readonly refused: string[];
  close(): Promise<void>;
}

/**
 * A proxy on 127.0.0.1 that answers every request and tunnel with 403: the browser's own
 * traffic (outside any session's context) goes nowhere.
 */
export async function startRefusingProxy(onRefused?: (target: string) => void): Promise<RefusingProxy> {
  const refused: string[] = [];
  const note = (target: string) => {
    refused.push(target.slice(0, 300));
    if (refused.length > 100) refused.shift();
    onRefused?.(target);
  };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    note(req.url ?? '');
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('no traffic outside a session\n');
  });
  server.on('connect', (req, socket: Socket) => {
    note(req.url ?? '');
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
