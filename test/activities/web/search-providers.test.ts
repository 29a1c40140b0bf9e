// The web_search providers against local stand-ins speaking each provider's documented shape
// (test/support/search-servers.ts): the request each sends as the server recorded it, the results
// mapped, made plain and cut to count, every kind of error answer as a SearchProviderError the
// model can read (never with the key in it), and a connection failure left as it came.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createSearchProvider,
  SEARCH_DEFAULT_URLS,
  SearchProviderError,
  type SearchProvider,
  type SearchProviderName,
} from '../../../activities/web/search/providers';
import { plainText, toResults } from '../../../activities/web/search/provider-http';
import {
  startSearchServer,
  type FakeSearchResult,
  type SearchServer,
  type SearchServerOptions,
} from '../../support/search-servers';

const KEY = 'tvly-SECRET-0123456789abcdef';

/** 25 results (more than a SearXNG page), the second without a URL, snippets with characters to escape. */
const RESULTS: FakeSearchResult[] = Array.from({ length: 25 }, (_, i) => ({
  title: `Rust result ${i}`,
  url: i === 1 ? '' : `https://example.com/rust/${i}?a=1&b=2`,
  snippet: `About rust number ${i}: "ownership" & borrowing <explained>`,
}));

/** The results a provider should return for RESULTS cut to `n`: the URL-less one skipped. */
const expected = (n: number) =>
  RESULTS.filter((r) => r.url)
    .slice(0, n)
    .map((r) => ({ title: r.title, url: r.url, snippet: r.snippet }));

const servers: SearchServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(provider: SearchProviderName, opts: Partial<SearchServerOptions> = {}): Promise<SearchServer> {
  const server = await startSearchServer(provider, { results: RESULTS, ...opts });
  servers.push(server);
  return server;
}

/** The provider at `url`, with KEY unless another key or none (null) is given. */
function providerAt(name: SearchProviderName, url: string, apiKey: string | null = KEY): SearchProvider {
  return createSearchProvider({ provider: name, url, apiKey: apiKey ?? undefined }, fetch);
}

/** The error a search rejects with (failing the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('the search succeeded');
}

const LABELS: Record<SearchProviderName, string> = { searxng: 'SearXNG', brave: 'Brave Search', tavily: 'Tavily' };
const PROVIDERS: SearchProviderName[] = ['searxng', 'brave', 'tavily'];

describe('SearXNG', () => {
  test('GET /search with q, format=json, pageno; Accept JSON, no Authorization without a key; a page cut to count', async () => {
    const server = await serve('searxng');
    const results = await providerAt('searxng', server.url, null).search('rust ownership', 3);
    expect(results).toEqual(expected(3));
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req).toMatchObject({
      method: 'GET',
      path: '/search',
      query: { q: 'rust ownership', format: 'json', pageno: '1' },
    });
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toBeUndefined();
  });

  test('a configured key goes as a Bearer token (a proxy in front of the instance); a wrong one is refused', async () => {
    const server = await serve('searxng', { apiKey: KEY });
    expect(await providerAt('searxng', server.url).search('rust', 2)).toEqual(expected(2));
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    const err = await failure(providerAt('searxng', server.url, 'wrong-key').search('rust', 2));
    expect(err).toBeInstanceOf(SearchProviderError);
    expect(err).toMatchObject({ status: 401 });
    expect(err.message).toMatch(/^SearXNG refused the API key \(HTTP 401.*WEB_SEARCH_API_KEY/);
  });

  test('an instance without the json format (403) is named as such, not as a refused key', async () => {
    const server = await serve('searxng', { failWith: { status: 403, body: 'Forbidden' } });
    const err = await failure(providerAt('searxng', server.url, null).search('rust', 2));
    expect(err).toMatchObject({ status: 403 });
    expect(err.message).toContain('format=json');
    expect(err.message).toContain('search.formats');
  });

  test('a 401 with no key configured says to configure one', async () => {
    const server = await serve('searxng', { failWith: { status: 401 } });
    const err = await failure(providerAt('searxng', server.url, null).search('rust', 2));
    expect(err.message).toMatch(/asks for credentials \(HTTP 401\) and none are configured.*WEB_SEARCH_API_KEY/);
  });
});

describe('Brave Search', () => {
  test('GET /res/v1/web/search with q and count; Accept JSON and X-Subscription-Token; <strong> and entities made plain', async () => {
    const server = await serve('brave', { apiKey: KEY });
    const results = await providerAt('brave', server.url).search('rust ownership', 3);
    expect(results).toEqual(expected(2)); // count=3 asked of Brave, one of the three without a URL
    const [req] = server.requests;
    expect(req).toMatchObject({
      method: 'GET',
      path: '/res/v1/web/search',
      query: { q: 'rust ownership', count: '3' },
    });
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['x-subscription-token']).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
  });

  test('the raw description really is markup (so the test above proves the stripping)', async () => {
    const server = await serve('brave', { apiKey: KEY });
    const res = await fetch(`${server.url}/res/v1/web/search?q=rust&count=1`, {
      headers: { 'X-Subscription-Token': KEY },
    });
    const body = (await res.json()) as { web: { results: { description: string }[] } };
    expect(body.web.results[0].description).toBe(
      'About <strong>rust</strong> number 0: &quot;ownership&quot; &amp; borrowing &lt;explained&gt;',
    );
  });

  test('count is clamped to the documented maximum, 20', async () => {
    const server = await serve('brave', { apiKey: KEY });
    expect(await providerAt('brave', server.url).search('rust', 50)).toEqual(expected(19));
    expect(server.requests[0].query.count).toBe('20');
  });

  test("Brave's answer to a bad key (422 SUBSCRIPTION_TOKEN_INVALID) is a refused key", async () => {
    const server = await serve('brave', { apiKey: 'the-right-key' });
    const err = await failure(providerAt('brave', server.url).search('rust', 3));
    expect(err).toBeInstanceOf(SearchProviderError);
    expect(err).toMatchObject({ status: 422 });
    expect(err.message).toBe(
      'Brave Search refused the API key (HTTP 422: The provided subscription token is invalid.); check WEB_SEARCH_API_KEY.',
    );
  });

  test('a "search" answer without web results is no results, not an error', async () => {
    const server = await serve('brave', {
      failWith: { status: 200, body: { type: 'search', query: { original: 'x' } } },
    });
    expect(await providerAt('brave', server.url).search('x', 3)).toEqual([]);
  });
});

describe('Tavily', () => {
  test('POST /search with a JSON body; Bearer key, Accept and Content-Type JSON; cut to max_results', async () => {
    const server = await serve('tavily', { apiKey: KEY });
    const results = await providerAt('tavily', server.url).search('rust ownership', 4);
    expect(results).toEqual(expected(3)); // max_results=4, one without a URL
    const [req] = server.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/search', query: {} });
    expect(req.body).toEqual({ query: 'rust ownership', max_results: 4, search_depth: 'basic' });
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['content-type']).toBe('application/json');
  });

  test("Tavily's 401 for a wrong key, with its own message", async () => {
    const server = await serve('tavily', { apiKey: 'tvly-right' });
    const err = await failure(providerAt('tavily', server.url).search('rust', 3));
    expect(err).toMatchObject({ status: 401 });
    expect(err.message).toBe(
      'Tavily refused the API key (HTTP 401: Unauthorized: missing or invalid API key.); check WEB_SEARCH_API_KEY.',
    );
  });
});

describe.each(PROVIDERS)('%s: error answers', (name) => {
  const label = LABELS[name];
  const search = (server: SearchServer) => providerAt(name, server.url).search('rust', 3);

  test('401 whose body echoes the key: a refused key, the key redacted', async () => {
    const body = { detail: { error: `invalid key ${KEY}` }, message: `key ${KEY} is not valid` };
    const server = await serve(name, { failWith: { status: 401, body } });
    const err = await failure(search(server));
    expect(err).toBeInstanceOf(SearchProviderError);
    expect(err).toMatchObject({ status: 401 });
    expect(err.message).toMatch(
      new RegExp(`^${label} refused the API key \\(HTTP 401: key \\[redacted\\] is not valid\\)`),
    );
    expect(err.message).toContain('WEB_SEARCH_API_KEY');
    expect(err.message).not.toContain(KEY);
  });

  test('429 with Retry-After: rate limited, when to retry said', async () => {
    const server = await serve(name, { failWith: { status: 429, headers: { 'Retry-After': '30' } } });
    const err = await failure(search(server));
    expect(err).toMatchObject({ status: 429 });
    expect(err.message).toMatch(
      new RegExp(`^${label} is rate limiting the searches \\(HTTP 429.*\\); retry after 30 seconds\\.$`),
    );
    const plain = await serve(name, { failWith: { status: 429, body: {} } });
    expect((await failure(search(plain))).message).toBe(
      `${label} is rate limiting the searches (HTTP 429); try again later.`,
    );
  });

  test("500: the status and at most 200 characters of the provider's message, without the key", async () => {
    const server = await serve(name, {
      failWith: { status: 500, body: { error: { detail: `boom for ${KEY} ${'x'.repeat(400)}` } } },
    });
    const err = await failure(search(server));
    expect(err).toMatchObject({ status: 500 });
    expect(err.message.startsWith(`${label} answered HTTP 500: boom for [redacted] xxx`)).toBe(true);
    expect(err.message.length).toBeLessThan(label.length + 240);
    expect(err.message).not.toContain(KEY);
    const html = await serve(name, { failWith: { status: 502, body: `<html>bad gateway ${KEY}</html>` } });
    expect((await failure(search(html))).message).toBe(`${label} answered HTTP 502.`);
  });

  test('a 200 that is not JSON, or JSON without the result list, is an error rather than no results', async () => {
    const page = await serve(name, {
      failWith: { status: 200, body: '<!DOCTYPE html><p>hello', headers: { 'content-type': 'text/html' } },
    });
    const err = await failure(search(page));
    expect(err).toBeInstanceOf(SearchProviderError);
    expect(err).toMatchObject({ status: undefined });
    expect(err.message).toBe(
      `${label} answered HTTP 200 with a body that is not JSON (content-type text/html), so it gave no results: is the URL its search API?`,
    );
    const other = await serve(name, { failWith: { status: 200, body: { hello: 'world' } } });
    expect((await failure(search(other))).message).toMatch(new RegExp(`^${label} answered JSON without a result list`));
  });

  test('an answer over 2 MB is not read to its end', async () => {
    const server = await serve(name, { failWith: { status: 200, body: 'x'.repeat(3 * 1024 * 1024) } });
    const err = await failure(search(server));
    expect(err).toBeInstanceOf(SearchProviderError);
    expect(err.message).toMatch(/more than 2 MB/);
  });

  test('a base URL with a path prefix (and a trailing slash) is joined, not replaced', async () => {
    const server = await serve(name, { basePath: '/proxy/api', apiKey: KEY });
    expect(server.url).toMatch(/\/proxy\/api$/);
    // SearXNG's page is cut to 2; Brave and Tavily are asked for 2, one without a URL.
    const n = name === 'searxng' ? 2 : 1;
    expect(await providerAt(name, `${server.url}/`).search('rust', 2)).toEqual(expected(n));
    expect(server.requests[0].path).toBe(name === 'brave' ? '/proxy/api/res/v1/web/search' : '/proxy/api/search');
  });

  test('a refused connection is thrown as it came, not as a SearchProviderError (the caller retries it)', async () => {
    const port = await closedPort();
    const err = await failure(providerAt(name, `http://127.0.0.1:${port}`).search('rust', 3));
    expect(err).not.toBeInstanceOf(SearchProviderError);
    expect(`${err.message} ${(err.cause as { code?: string } | undefined)?.code}`).toMatch(/ECONNREFUSED/);
  });

  test('an aborted search rejects with the abort, not a SearchProviderError', async () => {
    const server = await serve(name, { apiKey: KEY });
    const err = await failure(providerAt(name, server.url).search('rust', 3, AbortSignal.abort()));
    expect(err).not.toBeInstanceOf(SearchProviderError);
    expect(err.name).toBe('AbortError');
  });
});

/** A port nothing listens on: one a server had, closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the configuration', () => {
  test('searxng needs WEB_SEARCH_URL; brave and tavily need WEB_SEARCH_API_KEY (plain Errors)', () => {
    const noUrl = () => createSearchProvider({ provider: 'searxng' }, fetch);
    expect(noUrl).toThrow(/WEB_SEARCH_URL/);
    for (const provider of ['brave', 'tavily'] as const) {
      const noKey = () => createSearchProvider({ provider, apiKey: '  ' }, fetch);
      expect(noKey).toThrow(/WEB_SEARCH_API_KEY/);
      expect(noKey).not.toThrow(SearchProviderError);
    }
    expect(() => createSearchProvider({ provider: 'searxng', url: 'ftp://user:pw@host/' }, fetch)).toThrow(
      'WEB_SEARCH_URL must be an http(s) URL for the searxng search provider',
    );
    expect(() => createSearchProvider({ provider: 'bing' as SearchProviderName, apiKey: KEY }, fetch)).toThrow(
      /unknown search provider "bing"/,
    );
  });

  test('brave and tavily default to their public API; searxng has none', async () => {
    expect(SEARCH_DEFAULT_URLS).toEqual({ brave: 'https://api.search.brave.com', tavily: 'https://api.tavily.com' });
    const seen: string[] = [];
    const recording = async (url: string | URL) => {
      seen.push(String(url));
      return new Response(JSON.stringify({ type: 'search', results: [], web: { results: [] } }), { status: 200 });
    };
    for (const provider of ['brave', 'tavily'] as const) {
      const p = createSearchProvider({ provider, apiKey: KEY }, recording);
      expect(p.name).toBe(provider);
      await p.search('a b', 5);
    }
    expect(seen).toEqual([
      'https://api.search.brave.com/res/v1/web/search?q=a+b&count=5',
      'https://api.tavily.com/search',
    ]);
  });
});

describe('snippets as plain text', () => {
  test('tags dropped, common entities decoded, whitespace collapsed, "a < b" kept', () => {
    expect(plainText('  The <strong>Rust</strong>&nbsp;book &mdash; it&#x27;s &amp; &#8220;free&#8221;<br>now ')).toBe(
      "The Rust book — it's & “free” now",
    );
    expect(plainText('if a < b and c > d')).toBe('if a < b and c > d');
    expect(plainText('&lt;script&gt; stays text')).toBe('<script> stays text');
    expect(plainText('<p>one</p><p>two</p>')).toBe('one two');
    expect(plainText(undefined)).toBe('');
    expect(plainText('&bogus; &#99999999;')).toBe('&bogus; &#99999999;');
  });

  test('items without an http(s) URL are skipped; the rest cut to count', () => {
    const shape = { title: 't', url: 'u', snippet: 's', markup: false };
    const items = [
      null,
      'x',
      { t: 'no url' },
      { t: 'js', u: 'javascript:alert(1)' },
      { t: 'a', u: ' https://a.example/ ', s: 'one' },
    ];
    const more = [
      { t: 'b', u: 'http://b.example/x', s: 2 },
      { t: 'c', u: 'https://c.example/' },
    ];
    expect(toResults([...items, ...more], 2, shape)).toEqual([
      { title: 'a', url: 'https://a.example/', snippet: 'one' },
      { title: 'b', url: 'http://b.example/x', snippet: '' },
    ]);
  });

  test('at most 500 characters, cut with an ellipsis', () => {
    const long = plainText('word '.repeat(200));
    expect(long.length).toBe(500);
    expect(long.endsWith('…')).toBe(true);
  });
});
