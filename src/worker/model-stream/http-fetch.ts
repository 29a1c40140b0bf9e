// A `fetch` for the OpenAI client that speaks node:http(s) and hands the SDK
// the Node response stream as the body. Why: with the default fetch (undici) a
// streamed token crosses a WHATWG ReadableStream before the SDK's SSE decoder
// sees it; the SDK iterates an async-iterable body directly, so giving it the
// Node stream skips that layer. On the token path alone (model -> parse ->
// Redis, 8 streams, nothing else running) that cut the token thread's CPU per
// token by about a quarter and its p99 by about half a millisecond; see
// docs/performance.md. The SDK still builds the request, classifies statuses,
// applies its timeout and decodes the events, so the client behaves as before.
//
// Scope: what the SDK sends to an OpenAI-compatible endpoint (string or byte
// bodies). A request this file does not send itself (a Request object, a
// streamed or multipart body) goes to the fallback fetch unchanged.
import http from 'node:http';
import https from 'node:https';
import { PassThrough, pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

export interface HttpFetchOptions {
  /** Agent for http: URLs. Default: a keep-alive agent private to this fetch. */
  httpAgent?: http.Agent;
  /** Agent for https: URLs. Default: a keep-alive agent private to this fetch. */
  httpsAgent?: https.Agent;
  /** Sends what this fetch does not (see the file's header). Default: globalThis.fetch. */
  fallback?: typeof fetch;
}

export type HttpFetch = typeof fetch & {
  /** Closes the private agents' idle sockets. */
  close(): void;
};

/** Redirects followed before giving up, as fetch's default "follow" mode does (20 there; 5 is plenty for an API). */
const MAX_REDIRECTS = 5;

type SendableBody = string | Uint8Array | undefined;

function sendableBody(body: unknown): { ok: true; body: SendableBody } | { ok: false } {
  if (body === undefined || body === null) return { ok: true, body: undefined };
  if (typeof body === 'string' || body instanceof Uint8Array) return { ok: true, body };
  if (body instanceof ArrayBuffer) return { ok: true, body: new Uint8Array(body) };
  return { ok: false };
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('This operation was aborted', 'AbortError');
}

/** The part of Response the SDK reads; the body is the Node stream (async-iterable), read at most once. */
class NodeResponse {
  readonly ok: boolean;
  readonly redirected: boolean;
  readonly type = 'basic';
  private used = false;

  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly headers: Headers,
    readonly url: string,
    private readonly stream: Readable,
    redirects: number,
  ) {
    this.ok = status >= 200 && status < 300;
    this.redirected = redirects > 0;
  }

  get body(): Readable {
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    const parts: Buffer[] = [];
    for await (const chunk of this.stream) parts.push(chunk as Buffer);
    return Buffer.concat(parts);
  }

  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
  }
  return h;
}

/** undici decodes these for fetch's callers; so must we (a server may compress even unasked). */
function decoded(res: http.IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    enc === 'gzip' || enc === 'x-gzip'
      ? zlib.createGunzip()
      : enc === 'deflate'
        ? zlib.createInflate()
        : enc === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  const out = new PassThrough();
  pipeline(res, decoder, out, () => undefined);
  return out;
}

interface Attempt {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: SendableBody;
}

// eslint-disable-next-line max-lines-per-function -- the factory's body is the fetch and its closures over the agents it owns, each short
export function createHttpFetch(opts: HttpFetchOptions = {}): HttpFetch {
  const own: http.Agent[] = [];
  const agentFor = (protocol: string): http.Agent => {
    if (protocol === 'https:')
      return opts.httpsAgent ?? (own[1] ??= new https.Agent({ keepAlive: true, noDelay: true }));
    return opts.httpAgent ?? (own[0] ??= new http.Agent({ keepAlive: true, noDelay: true }));
  };
  const fallback = opts.fallback ?? ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args));

  const once = (a: Attempt, signal: AbortSignal | undefined): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const send = a.url.protocol === 'https:' ? https.request : http.request;
      const req = send(a.url, { method: a.method, headers: a.headers, agent: agentFor(a.url.protocol) });
      let res: http.IncomingMessage | undefined;
      const onAbort = () => {
        const err = abortError(signal!);
        // Before the answer the request fails; after it, the body iteration does.
        if (res) res.destroy(err);
        else req.destroy(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const detach = () => signal?.removeEventListener('abort', onAbort);
      req.once('response', (r) => {
        res = r;
        r.once('close', detach);
        resolve(r);
      });
      req.once('error', (err) => {
        detach();
        reject(err);
      });
      req.end(a.body);
    });

  const httpFetch = async (input: Parameters<typeof fetch>[0], init: RequestInit = {}): Promise<Response> => {
    const body = sendableBody(init.body);
    if (typeof input === 'object' && !(input instanceof URL)) return fallback(input, init);
    if (!body.ok) return fallback(input, init);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    let a: Attempt = {
      url: new URL(String(input)),
      method: (init.method ?? 'GET').toUpperCase(),
      headers,
      body: body.body,
    };
    const signal = init.signal ?? undefined;
    for (let redirects = 0; ; redirects++) {
      const res = await once(a, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (init.redirect !== 'manual' && [301, 302, 303, 307, 308].includes(status) && location) {
        res.resume();
        if (init.redirect === 'error' || redirects >= MAX_REDIRECTS)
          throw new TypeError(`fetch failed: redirect (${status}) not followed`);
        a = redirectAttempt(a, status, new URL(location, a.url));
        continue;
      }
      return new NodeResponse(
        status,
        res.statusMessage ?? '',
        toHeaders(res.headers),
        a.url.toString(),
        decoded(res),
        redirects,
      ) as unknown as Response;
    }
  };

  return Object.assign(httpFetch, {
    close: () => {
      for (const agent of own) agent?.destroy();
    },
  }) as HttpFetch;
}

/** Fetch's redirect rules: 303, and 301/302 after a POST, become a GET without body; credentials stay on the origin. */
function redirectAttempt(a: Attempt, status: number, to: URL): Attempt {
  const headers = { ...a.headers };
  let { method, body } = a;
  if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    method = 'GET';
    body = undefined;
    for (const k of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'])
      delete headers[k];
  }
  if (to.origin !== a.url.origin) delete headers.authorization;
  return { url: to, method, headers, body };
}
