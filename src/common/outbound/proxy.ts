// An HTTP proxy that applies the outbound policy: the only way out for code that runs in a
// sandbox with network allowed (docs/computer.md, "Network"). It listens on a unix socket (the
// sandbox sees that socket and nothing else of the host's network) and serves the two forms every
// HTTP client speaks to a proxy: CONNECT host:port (HTTPS, and any TCP through a tunnel) and an
// absolute-form request (plain HTTP). Each target is resolved and checked here, and the socket
// connects to the address that was checked (DNS rebinding): loopback, private and link-local
// addresses are refused unless OUTBOUND_ALLOWLIST names them. A refusal is a 403 whose text says
// why, so that the agent's curl or pip shows the reason. The same proxy also listens on TCP
// (startTcpPolicyProxy, 127.0.0.1 and a free port) for clients that cannot speak to a unix socket:
// the headless browser (activities/browser/) is one.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { OutboundLookupError, OutboundRefusedError, parseOutboundUrl, showUrl, type OutboundPolicy } from './policy';

/** What the proxy did with one request (for logs and metrics; never credentials, headers or queries). */
export interface ProxyDecision {
  /** 'connect' (a tunnel) or 'http' (a plain HTTP request). */
  kind: 'connect' | 'http';
  /** host:port asked for. */
  target: string;
  result: 'allowed' | 'refused' | 'failed';
  /** Why it was refused or failed. */
  reason?: string;
}

export interface PolicyProxyOptions {
  /** How long a connection to a target may take, ms (default 10 s). */
  connectTimeoutMs?: number;
  /** A tunnel or request with no traffic for this long is closed, ms (default 5 minutes). */
  idleTimeoutMs?: number;
  /** Connections served at once (default 256): a command cannot exhaust the worker's sockets. */
  maxConnections?: number;
  onDecision?: (d: ProxyDecision) => void;
}

export interface PolicyProxy {
  /** The unix socket it listens on. */
  readonly socketPath: string;
  /** Stops listening and ends every open tunnel and request. */
  close(): Promise<void>;
}

export interface TcpPolicyProxy {
  /** Always 127.0.0.1: the proxy is for clients on this machine only. */
  readonly host: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, as a browser's proxy setting names it. */
  readonly url: string;
  /** Stops listening and ends every open tunnel and request. */
  close(): Promise<void>;
}

// Headers that describe the hop to the proxy, not the request: never forwarded.
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/** `headers` without the hop headers (a copy). */
function endToEnd<T extends object>(headers: T): T {
  const out = { ...headers } as Record<string, unknown>;
  for (const h of Object.keys(out)) if (HOP_HEADERS.has(h)) delete out[h];
  return out as T;
}

class ProxyFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly result: 'refused' | 'failed',
  ) {
    super(message);
  }
}

/** The failure to answer for an error of the policy or of the connection. */
function failureOf(err: unknown, target: string): ProxyFailure {
  if (err instanceof ProxyFailure) return err;
  if (err instanceof OutboundRefusedError)
    return new ProxyFailure(err.reason === 'invalid-url' ? 400 : 403, err.message, 'refused');
  if (err instanceof OutboundLookupError) return new ProxyFailure(502, err.message, 'failed');
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  return new ProxyFailure(502, `${target}: the connection failed (${code})`, 'failed');
}

/** host and port of a CONNECT's authority (host:port, [v6]:port). */
function authority(target: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+):(\d{1,5})$/.exec(target);
  const port = Number(m?.[2]);
  if (!m || port < 1 || port > 65535)
    throw new ProxyFailure(400, `CONNECT needs host:port, got ${JSON.stringify(target.slice(0, 100))}`, 'refused');
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port };
}

function answer(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Connects to `address` (one the policy checked), or fails after the timeout. */
function connectTo(address: string, port: number, timeoutMs: number, target: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const upstream = net.connect({ host: address, port });
    const timer = setTimeout(() => {
      upstream.destroy();
      reject(new ProxyFailure(504, `${target}: no connection within ${timeoutMs / 1000} s`, 'failed'));
    }, timeoutMs);
    upstream.once('connect', () => {
      clearTimeout(timer);
      upstream.removeAllListeners('error');
      resolve(upstream);
    });
    upstream.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** What each connection's handler needs. */
interface Ctx {
  policy: OutboundPolicy;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  decide(d: ProxyDecision): void;
  /** Keeps `s` in the set close() ends. */
  track(s: Duplex): void;
}

/** CONNECT host:port: a tunnel to the checked address, or an answer saying why not. */
async function tunnel(ctx: Ctx, req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  const target = req.url ?? '';
  ctx.track(client);
  client.on('error', () => client.destroy());
  try {
    const { host, port } = authority(target);
    const address = await ctx.policy.checkHost(host, `CONNECT ${target}`);
    const upstream = await connectTo(address, port, ctx.connectTimeoutMs, target);
    ctx.track(upstream);
    if (client.destroyed) return void upstream.destroy();
    ctx.decide({ kind: 'connect', target, result: 'allowed' });
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    // The 'connect' event's socket is a net.Socket (typed as a Duplex).
    for (const s of [client as net.Socket, upstream]) s.setTimeout(ctx.idleTimeoutMs, () => s.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  } catch (err) {
    const f = failureOf(err, target);
    ctx.decide({ kind: 'connect', target: target.slice(0, 300), result: f.result, reason: f.message });
    answer(client, f.status, f.message);
  }
}

/** An absolute-form request (GET http://host/path): sent on to the checked address, its answer passed back. */
async function forward(ctx: Ctx, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  let target = '';
  const fail = (err: unknown) => {
    const f = failureOf(err, target);
    ctx.decide({ kind: 'http', target, result: f.result, reason: f.message });
    res.writeHead(f.status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(`${f.message}\n`);
  };
  try {
    // An origin-form request (GET /x) is meant for a server, not for a proxy: no absolute URL.
    const url = parseOutboundUrl(req.url ?? '');
    if (url.protocol !== 'http:')
      throw new ProxyFailure(
        400,
        'a proxy request needs an absolute http:// URL (https goes through CONNECT)',
        'refused',
      );
    target = url.host;
    await ctx.policy.checkUrl(url);
    const headers = endToEnd(req.headers);
    const upstream = http.request(url, {
      method: req.method,
      headers,
      lookup: ctx.policy.lookup,
      agent: false,
      timeout: ctx.connectTimeoutMs,
    });
    // The connect timeout until the socket is up, then the idle one (a slow answer is not a dead target).
    upstream.on('socket', (socket) => socket.once('connect', () => upstream.setTimeout(ctx.idleTimeoutMs)));
    upstream.on('timeout', () =>
      upstream.destroy(new ProxyFailure(504, `${showUrl(url)}: no answer in time`, 'failed')),
    );
    upstream.on('response', (reply) => {
      ctx.decide({ kind: 'http', target, result: 'allowed' });
      res.writeHead(reply.statusCode ?? 502, endToEnd(reply.headers));
      reply.pipe(res);
    });
    upstream.on('error', (err) => (res.headersSent ? res.destroy() : fail(err)));
    req.pipe(upstream);
  } catch (err) {
    fail(err);
  }
}

/** The proxy's server, not yet listening, and how to end every connection it holds. */
function proxyServer(
  policy: OutboundPolicy,
  options: PolicyProxyOptions,
): { server: http.Server; endAll: () => Promise<void> } {
  const open = new Set<Duplex>();
  const ctx: Ctx = {
    policy,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 5 * 60_000,
    decide: (d) => options.onDecision?.(d),
    track: (s) => {
      open.add(s);
      s.once('close', () => open.delete(s));
    },
  };
  const server = http.createServer({ requestTimeout: 0 }, (req, res) => void forward(ctx, req, res));
  server.on('connect', (req, socket, head) => void tunnel(ctx, req, socket, head));
  server.on('connection', ctx.track);
  server.maxConnections = options.maxConnections ?? 256;
  server.setTimeout(ctx.idleTimeoutMs);
  const endAll = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of open) s.destroy();
    await closed;
  };
  return { server, endAll };
}

/** Listens on a unix socket path, or on 127.0.0.1 and a free port. */
function listen(server: http.Server, at: { path: string } | { host: string; port: 0 }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts the proxy on `socketPath` (a stale socket file there is replaced). */
export async function startPolicyProxy(
  policy: OutboundPolicy,
  socketPath: string,
  options: PolicyProxyOptions = {},
): Promise<PolicyProxy> {
  const { server, endAll } = proxyServer(policy, options);
  fs.rmSync(socketPath, { force: true });
  await listen(server, { path: socketPath });
  return {
    socketPath,
    close: async () => {
      await endAll();
      fs.rmSync(socketPath, { force: true });
    },
  };
}

/**
 * Starts the proxy on 127.0.0.1 and a free port. Any process of this machine may connect to it,
 * which grants nothing the policy would not: every target is checked as for the unix socket.
 */
export async function startTcpPolicyProxy(
  policy: OutboundPolicy,
  options: PolicyProxyOptions = {},
): Promise<TcpPolicyProxy> {
  const { server, endAll } = proxyServer(policy, options);
  await listen(server, { host: '127.0.0.1', port: 0 });
  const { port } = server.address() as net.AddressInfo;
  return { host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, close: endAll };
}
