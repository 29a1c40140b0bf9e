// Local stand-ins for the web_search providers: a real node:http server on 127.0.0.1 (a free
// port) per call, speaking the provider's documented shape, so a test exercises the real
// request and parsing code end to end. Each routes only its documented method and path (any other
// path 404, another method 405), checks the key where the provider takes one, and records every
// request it receives (method, path, query, headers, parsed body) for the test to assert on.
//   searxng  GET|POST / and /search (POST as form data); format=json or an HTML page; results[]
//            {title, url, content, engine, …}. No key of its own: with `apiKey` set it checks
//            `Authorization: Bearer` as a proxy in front of it would, answering 401 text.
//   brave    GET /res/v1/web/search, X-Subscription-Token; count 1..20 (422 past it); the answer
//            {type: "search", web: {results: [{title, url, description}]}}, description as HTML
//            (the query's words in <strong> unless text_decorations=false, text escaped). A wrong
//            or missing key: 422 ErrorResponse SUBSCRIPTION_TOKEN_INVALID, as Brave answers it.
//   tavily   POST /search, JSON {query, max_results (0..20, default 5)}, `Authorization: Bearer`;
//            results[] {title, url, content, score}. A wrong key: 401 {detail: {error}}.
// `failWith` makes every routed request answer that status instead (its body, or the provider's
// error shape for the status when none is given; a string body is sent as text).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SearchProviderName } from '../../activities/web/search/providers';

export interface FakeSearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchServerOptions {
  results: FakeSearchResult[];
  /** The key the server accepts. Unset: brave and tavily accept any non-empty key, searxng checks none. */
  apiKey?: string;
  failWith?: { status: number; body?: unknown; headers?: Record<string, string> };
  /** Serve under a path prefix (e.g. "/searx"), as behind a reverse proxy; `url` then ends with it. */
  basePath?: string;
}

export interface RecordedRequest {
  method: string;
  /** The path as received (prefix included), without the query string. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** JSON or form data parsed; other text as a string; undefined when empty. */
  body?: unknown;
}

export interface SearchServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface FakeProvider {
  methods: readonly string[];
  paths: readonly string[];
  /** The refusal for a wrong or missing key, or undefined when the key passes. */
  checkKey(req: RecordedRequest, apiKey: string | undefined): Answer | undefined;
  /** The provider's error body for `status`, when failWith gives none. */
  errorBody(status: number): unknown;
  answer(req: RecordedRequest, results: readonly FakeSearchResult[]): Answer;
}

export async function startSearchServer(
  provider: SearchProviderName,
  opts: SearchServerOptions,
): Promise<SearchServer> {
  const fake = FAKES[provider];
  const basePath = (opts.basePath ?? '').replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = record(req, Buffer.concat(chunks).toString('utf8'));
      requests.push(recorded);
      send(res, route(fake, opts, basePath, recorded));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function route(fake: FakeProvider, opts: SearchServerOptions, basePath: string, req: RecordedRequest): Answer {
  const path = req.path.startsWith(`${basePath}/`) ? req.path.slice(basePath.length) : undefined;
  if (path === undefined || !fake.paths.includes(path)) return { status: 404, body: 'Not Found' };
  if (!fake.methods.includes(req.method))
    return { status: 405, body: 'Method Not Allowed', headers: { allow: fake.methods.join(', ') } };
  if (opts.failWith) {
    const { status, body, headers } = opts.failWith;
    return { status, body: body === undefined ? fake.errorBody(status) : body, headers };
  }
  return fake.checkKey(req, opts.apiKey) ?? fake.answer(req, opts.results);
}

function record(req: http.IncomingMessage, raw: string): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://fake.invalid');
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...req.headers },
    body: parseBody(raw, String(req.headers['content-type'] ?? '')),
  };
}

function parseBody(raw: string, type: string): unknown {
  if (!raw) return undefined;
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  if (type.includes('json')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  return raw;
}

/** A string body goes as text (unless the headers say otherwise), anything else as JSON. */
function send(res: http.ServerResponse, answer: Answer): void {
  const text = typeof answer.body === 'string';
  const body = text ? (answer.body as string) : JSON.stringify(answer.body);
  const headers: Record<string, string> = { 'content-type': text ? 'text/plain; charset=utf-8' : 'application/json' };
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = value;
  res.writeHead(answer.status, headers);
  res.end(body);
}

const json = (status: number, body: unknown): Answer => ({ status, body });

/** A header as one string (the last, when sent twice). */
function header(req: RecordedRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** Bearer auth: the expected key, or any non-empty one when `required` and none is set. */
function bearerOk(req: RecordedRequest, apiKey: string | undefined, required: boolean): boolean {
  const auth = header(req, 'authorization');
  if (apiKey !== undefined) return auth === `Bearer ${apiKey}`;
  return !required || /^Bearer \S+$/.test(auth ?? '');
}

// --- SearXNG ---------------------------------------------------------------------------------

const SEARXNG_PAGE = 20;

const searxng: FakeProvider = {
  methods: ['GET', 'POST'],
  paths: ['/', '/search'],
  checkKey: (req, apiKey) =>
    apiKey === undefined || bearerOk(req, apiKey, true) ? undefined : { status: 401, body: 'Unauthorized' },
  errorBody: (status) => (status === 429 ? 'Too Many Requests' : `HTTP ${status}`),
  answer(req, results) {
    const params = { ...req.query, ...(req.method === 'POST' ? (req.body as Record<string, string>) : {}) };
    const q = params.q ?? '';
    if (params.format !== 'json') return { status: 200, body: htmlPage(q), headers: { 'content-type': 'text/html' } };
    const pageno = Math.max(1, Number(params.pageno ?? 1) || 1);
    const page = q ? results.slice((pageno - 1) * SEARXNG_PAGE, pageno * SEARXNG_PAGE) : [];
    return json(200, {
      query: q,
      number_of_results: page.length,
      results: page.map((r, i) => searxngResult(r, i)),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: [],
    });
  },
};

function searxngResult(r: FakeSearchResult, i: number): Record<string, unknown> {
  const parsed = URL.canParse(r.url) ? new URL(r.url) : undefined;
  return {
    url: r.url,
    title: r.title,
    content: r.snippet,
    engine: 'fake',
    parsed_url: parsed
      ? [parsed.protocol.replace(':', ''), parsed.host, parsed.pathname, '', parsed.search.slice(1), '']
      : [],
    template: 'default.html',
    engines: ['fake'],
    positions: [i + 1],
    score: 1 / (i + 1),
    category: 'general',
    publishedDate: null,
  };
}

function htmlPage(q: string): string {
  return `<!DOCTYPE html><html><head><title>${escapeHtml(q)} - SearXNG</title></head><body></body></html>`;
}

// --- Brave Search ----------------------------------------------------------------------------

const braveError = (status: number, code: string, detail: string): Answer =>
  json(status, {
    type: 'ErrorResponse',
    error: { id: '00000000-0000-4000-8000-000000000000', status, code, detail, meta: { component: 'fake' } },
    time: Math.floor(Date.now() / 1000),
  });

const brave: FakeProvider = {
  methods: ['GET'],
  paths: ['/res/v1/web/search'],
  checkKey(req, apiKey) {
    const token = header(req, 'x-subscription-token');
    const ok = apiKey === undefined ? !!token : token === apiKey;
    return ok
      ? undefined
      : braveError(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.');
  },
  errorBody: (status) =>
    status === 429
      ? braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.').body
      : braveError(status, 'FAKE_ERROR', `HTTP ${status}`).body,
  answer(req, results) {
    const q = req.query.q ?? '';
    const count = Number(req.query.count ?? 20);
    if (!q) return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s): q');
    if (!Number.isInteger(count) || count < 1 || count > 20)
      return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s): count');
    const decorate = !['false', '0'].includes(req.query.text_decorations ?? '');
    return json(200, {
      type: 'search',
      query: { original: q, more_results_available: results.length > count },
      web: {
        type: 'search',
        family_friendly: true,
        results: results.slice(0, count).map((r) => ({
          type: 'search_result',
          title: r.title,
          url: r.url,
          description: braveDescription(r.snippet, q, decorate),
          is_source_local: false,
          family_friendly: true,
        })),
      },
    });
  },
};

/**
 * The snippet as Brave's HTML: escaped, the query's words in <strong> (or the first word, so
 * that there is always some markup to strip). Marked before escaping, so an entity is never split.
 */
function braveDescription(snippet: string, q: string, decorate: boolean): string {
  if (!decorate) return escapeHtml(snippet);
  const words = q.split(/\s+/).filter((w) => /^\w+$/.test(w));
  const re = words.length ? new RegExp(`\\b(${words.join('|')})\\b`, 'gi') : undefined;
  let marked = re ? snippet.replace(re, '\u0001$1\u0002') : snippet;
  if (!marked.includes('\u0001')) marked = marked.replace(/^(\s*)(\S+)/, '$1\u0001$2\u0002');
  return escapeHtml(marked)
    .replace(/\u0001/g, '<strong>')
    .replace(/\u0002/g, '</strong>');
}

// --- Tavily ----------------------------------------------------------------------------------

const tavilyError = (status: number, error: string): Answer => json(status, { detail: { error } });

const tavily: FakeProvider = {
  methods: ['POST'],
  paths: ['/search'],
  checkKey: (req, apiKey) =>
    bearerOk(req, apiKey, true) ? undefined : tavilyError(401, 'Unauthorized: missing or invalid API key.'),
  errorBody: (status) =>
    tavilyError(status, status === 429 ? 'Your request has been blocked due to excessive requests.' : `HTTP ${status}`)
      .body,
  answer(req, results) {
    const body = (req.body ?? {}) as { query?: unknown; max_results?: unknown };
    if (typeof body.query !== 'string' || !body.query) return tavilyError(400, 'Query is missing.');
    const max = body.max_results ?? 5;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > 20)
      return tavilyError(400, 'max_results must be between 0 and 20.');
    return json(200, {
      query: body.query,
      follow_up_questions: null,
      answer: null,
      images: [],
      results: results.slice(0, max).map((r, i) => ({
        title: r.title,
        url: r.url,
        content: r.snippet,
        score: Math.round((0.95 - i * 0.05) * 1000) / 1000,
        raw_content: null,
      })),
      response_time: 0.01,
    });
  },
};

const FAKES: Readonly<Record<SearchProviderName, FakeProvider>> = { searxng, brave, tavily };

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;');
}
