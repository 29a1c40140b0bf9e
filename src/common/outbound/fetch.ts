// A fetch for calls made on a user's behalf (the MCP SDK's transports take it
// as their `fetch` option): every URL, the first and each redirect target, is
// checked by the outbound policy before anything connects, and the socket
// resolves its host through the policy's lookup, so it only connects to an
// address that was checked (a DNS answer that changed in between is refused).
// Redirects are followed here, never by undici, so each target is checked.
import {
  Agent,
  Headers,
  fetch as undiciFetch,
  type HeadersInit as UndiciHeadersInit,
  type RequestInit as UndiciRequestInit,
  type Response as UndiciResponse,
} from 'undici';
import { OutboundLookupError, OutboundRefusedError, parseOutboundUrl, showUrl, type OutboundPolicy } from './policy';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Credentials for the first origin must not reach another one a redirect names (as browsers do).
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
// Headers describing a body, dropped with it when a redirect turns the request into a GET.
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/** A redirect that is not followed: too many, an invalid Location, a streamed body to send again. */
export class RedirectError extends Error {
  override readonly name = 'RedirectError';
}

/** A fetch (the MCP SDK's FetchLike) that also owns its connection pool: close() it when done. */
export type PolicyFetch = ((url: string | URL, init?: RequestInit) => Promise<Response>) & {
  /** Closes the connection pool (idle keep-alive sockets); later calls fail. */
  close(): Promise<void>;
};

type Hop = Omit<UndiciRequestInit, 'headers'> & { headers: Headers };

/**
 * policy.checkUrl for every URL, then undici with `redirect: 'manual'` through
 * one Agent whose sockets resolve with policy.lookup. Follows up to
 * `maxRedirects` (default 5) redirects itself unless the caller asks for
 * `redirect: 'manual'` (the 3xx is returned) or `'error'`.
 */
export function policyFetch(policy: OutboundPolicy, opts: { maxRedirects?: number } = {}): PolicyFetch {
  const maxRedirects = opts.maxRedirects ?? 5;
  const agent = new Agent({ connect: { lookup: policy.lookup } });

  const send = async (url: URL, hop: Hop): Promise<UndiciResponse> => {
    await policy.checkUrl(url); // before any socket: a refused target is never connected to
    try {
      return await undiciFetch(url, { ...hop, redirect: 'manual', dispatcher: agent });
    } catch (err) {
      throw refusalIn(err);
    }
  };

  const fetchChecked = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const first = parseOutboundUrl(input);
    let url = first;
    let hop: Hop = { ...(init as UndiciRequestInit), headers: new Headers(init.headers as UndiciHeadersInit) };
    for (let followed = 0; ; followed++) {
      const res = await send(url, hop);
      const location = REDIRECTS.has(res.status) ? res.headers.get('location') : null;
      if (location === null || init.redirect === 'manual') return res as unknown as Response;
      await res.body?.cancel(); // frees the socket for reuse
      if (init.redirect === 'error')
        throw new TypeError(`${showUrl(url)} redirected (HTTP ${res.status}) and redirect is "error"`);
      if (followed === maxRedirects)
        throw new RedirectError(`too many redirects: ${showUrl(first)} redirected more than ${maxRedirects} times`);
      const next = redirectTarget(location, url);
      hop = redirected(hop, res.status, url, next);
      url = next;
    }
  };

  return Object.assign(fetchChecked, { close: () => agent.close() });
}

/** undici reports a failed connect as TypeError('fetch failed') with the lookup's error as cause: surface ours. */
function refusalIn(err: unknown): unknown {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause instanceof OutboundRefusedError || cause instanceof OutboundLookupError ? cause : err;
}

function redirectTarget(location: string, from: URL): URL {
  try {
    return new URL(location, from);
  } catch {
    throw new RedirectError(`${showUrl(from)} redirected to an invalid Location`);
  }
}

/** The request for a redirect target: like browsers, 303 (and 301/302 of a POST) become a GET without body. */
function redirected(hop: Hop, status: number, from: URL, to: URL): Hop {
  const headers = new Headers(hop.headers);
  if (from.origin !== to.origin) for (const h of CREDENTIAL_HEADERS) headers.delete(h);
  const method = (hop.method ?? 'GET').toUpperCase();
  const toGet =
    status === 303 ? method !== 'GET' && method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST';
  if (toGet) {
    for (const h of BODY_HEADERS) headers.delete(h);
    return { ...hop, method: 'GET', body: undefined, headers };
  }
  if (!resendable(hop.body))
    throw new RedirectError(
      `${showUrl(from)} redirected (HTTP ${status}) a request whose streamed body cannot be sent again`,
    );
  return { ...hop, headers };
}

/** A 307/308 resends the body: fine for strings and buffers (MCP posts strings), impossible for a consumed stream. */
function resendable(body: unknown): boolean {
  return (
    body == null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof URLSearchParams ||
    body instanceof Blob
  );
}
