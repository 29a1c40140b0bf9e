// What the three search providers share: one bounded JSON exchange, its failures as sentences the
// model reads, and a result as plain text. A provider's answer that is an error (a status, a body
// that is not its JSON) becomes a SearchProviderError; a connection error is left as it came, so
// the caller can tell "the provider said no" (answered to the model) from "the network failed"
// (retried). No message ever carries the API key: text taken from a body is redacted, and neither
// the request's headers nor its URL are quoted.
import type { FetchLike, SearchResult } from './providers';

/** The provider answered, and the answer is an error (a status, or a body that is not its JSON). */
export class SearchProviderError extends Error {
  override readonly name = 'SearchProviderError';
  constructor(
    message: string,
    /** The HTTP status of the answer, when it was not a 2xx; absent for a 2xx whose body was unusable. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Most bytes read of one answer: a page of results is a few tens of kB, so more is not a search answer. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Longest snippet and title the model gets, characters. */
const MAX_SNIPPET = 500;
const MAX_TITLE = 300;
/** Longest piece of a provider's own error message quoted to the model, characters. */
const MAX_DETAIL = 200;

/** One request to a provider, described for the exchange and for its messages. */
export interface ProviderRequest {
  /** The provider as the model reads it: "SearXNG", "Brave Search", "Tavily". */
  label: string;
  url: URL;
  init: RequestInit;
  /** Redacted from any text a message takes from the answer. */
  apiKey?: string;
  signal?: AbortSignal;
  /** A provider's own reading of an error status (e.g. Brave's 422 for a bad key): a sentence, or undefined for the default. */
  explain?: (status: number, body: unknown, detail: string | undefined) => string | undefined;
}

/** Sends the request, reads at most MAX_BODY_BYTES, and returns the parsed JSON of a 2xx answer. */
export async function exchangeJson(fetch: FetchLike, req: ProviderRequest): Promise<unknown> {
  const res = await fetch(req.url, { ...req.init, signal: req.signal });
  const read = await readBounded(res, MAX_BODY_BYTES);
  if (!res.ok) throw statusError(req, res, read.text);
  if (read.text === undefined)
    throw new SearchProviderError(
      `${req.label} answered with more than ${MAX_BODY_BYTES / (1024 * 1024)} MB, which is not a search answer; the search was abandoned.`,
    );
  const body = parseJson(read.text);
  if (body === undefined)
    throw new SearchProviderError(
      `${req.label} answered HTTP ${res.status} with a body that is not JSON (${describeType(res)}), so it gave no results: is the URL its search API?`,
    );
  return body;
}

/** The body as text, or undefined when it is larger than `limit` (then not read further). */
async function readBounded(res: Response, limit: number): Promise<{ text?: string }> {
  if (!res.body) return { text: '' };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined); // frees the socket; the rest is never downloaded
      return {};
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString('utf8') };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** "content-type text/html", or "no content-type": what the model (and an operator) needs to see the mistake. */
function describeType(res: Response): string {
  const type = res.headers.get('content-type');
  return type ? `content-type ${clean(type.split(';')[0], 60)}` : 'no content-type';
}

/** The error a non-2xx answer becomes: a refused key, a rate limit, or the status with the provider's own words. */
function statusError(req: ProviderRequest, res: Response, text: string | undefined): SearchProviderError {
  const body = text === undefined ? undefined : parseJson(text);
  const found = errorDetail(body, 0);
  const detail = found ? clean(redact(found, req.apiKey), MAX_DETAIL) : undefined;
  const said = detail ? `: ${detail}` : '';
  const special = req.explain?.(res.status, body, detail);
  if (special) return new SearchProviderError(special, res.status);
  if (res.status === 401 || res.status === 403)
    return new SearchProviderError(
      `${req.label} refused the API key (HTTP ${res.status}${said}); check WEB_SEARCH_API_KEY.`,
      res.status,
    );
  if (res.status === 429) {
    const after = retryAfter(res.headers.get('retry-after'), req.apiKey);
    const when = after ? `retry after ${after}` : 'try again later';
    return new SearchProviderError(`${req.label} is rate limiting the searches (HTTP 429${said}); ${when}.`, 429);
  }
  return new SearchProviderError(`${req.label} answered HTTP ${res.status}${said}.`, res.status);
}

/** Retry-After as sent (seconds, or an HTTP date), made safe to show; undefined when absent or odd. */
function retryAfter(value: string | null, apiKey: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = redact(value.trim(), apiKey);
  if (/^\d{1,7}$/.test(v)) return `${v} seconds`;
  return /^[\w ,:+-]{1,64}$/.test(v) ? v : undefined;
}

/**
 * A provider's own error message, wherever its JSON keeps it: `message`, `detail` (Tavily nests
 * `{detail: {error}}`), `error` (Brave nests `{error: {detail}}`), `errors[0]`, or FastAPI's `msg`.
 */
function errorDetail(body: unknown, depth: number): string | undefined {
  if (depth > 3 || body == null) return undefined;
  if (typeof body === 'string') return body.trim() || undefined;
  if (Array.isArray(body)) return errorDetail(body[0], depth + 1);
  if (typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  for (const key of ['message', 'detail', 'error', 'errors', 'msg']) {
    const found = errorDetail(o[key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Every occurrence of the key replaced: a provider that echoes the key it refused must not leak it. */
export function redact(text: string, apiKey: string | undefined): string {
  return apiKey ? text.split(apiKey).join('[redacted]') : text;
}

/** One line of at most `max` characters, without control characters. */
function clean(text: string, max: number): string {
  return cut(
    text
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let head = text.slice(0, max - 1);
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1); // never half a surrogate pair
  return `${head.trimEnd()}…`;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  laquo: '«',
  raquo: '»',
  copy: '©',
  reg: '®',
};

/** Decodes the common named entities and every numeric one (a code point out of range stays as written). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/**
 * Provider text as one plain line, cut to `max`. With `markup` (Brave's HTML) tags are dropped
 * (Brave marks the query's words with <strong>; a block tag becomes a space) and entities
 * decoded; only what looks like a tag is dropped, so "a < b" survives, and tags go before entities
 * are decoded, so an escaped "&lt;b&gt;" stays text. Without it (SearXNG's and Tavily's text) the
 * text is taken as it is: "use <div>" there is text, not a tag.
 */
export function plainText(value: unknown, max = MAX_SNIPPET, markup = true): string {
  if (typeof value !== 'string') return '';
  if (!markup) return clean(value, max);
  const noTags = value
    .replace(/<(br|\/?(p|div|li|tr|h[1-6]))\b[^<>]*>/gi, ' ')
    .replace(/<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>/gi, '');
  return clean(decodeEntities(noTags), max);
}

/** The result's URL when it is an absolute http(s) URL; a result without one is no use to the model. */
function usableUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const url = value.trim();
  if (!URL.canParse(url)) return undefined;
  const { protocol } = new URL(url);
  return protocol === 'http:' || protocol === 'https:' ? url : undefined;
}

/** Where a provider's item keeps each part, and whether its text is HTML. */
export interface ResultShape {
  title: string;
  url: string;
  snippet: string;
  markup: boolean;
}

/** The provider's items as results: those without a usable URL skipped, text made plain, at most `count`. */
export function toResults(items: readonly unknown[], count: number, shape: ResultShape): SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of items) {
    if (results.length >= count) break;
    if (!item || typeof item !== 'object') continue;
    const o = item as Record<string, unknown>;
    const url = usableUrl(o[shape.url]);
    if (!url) continue;
    const title = plainText(o[shape.title], MAX_TITLE, shape.markup);
    results.push({ title, url, snippet: plainText(o[shape.snippet], MAX_SNIPPET, shape.markup) });
  }
  return results;
}

/** A 2xx whose JSON lacks the result list: named, so a changed API or a wrong URL is not mistaken for "no results". */
export function missingList(label: string, where: string): SearchProviderError {
  return new SearchProviderError(
    `${label} answered JSON without a result list (${where}), so it gave no results: is the URL its search API?`,
  );
}

/** count as the providers take it: an integer from 1 to 20. */
export function clampCount(count: number): number {
  if (!Number.isFinite(count)) throw new RangeError(`a search's count must be a number from 1 to 20, not ${count}`);
  return Math.min(20, Math.max(1, Math.floor(count)));
}

/**
 * The endpoint under a base URL that may carry a path prefix: http://host/searx + /search is
 * http://host/searx/search (a trailing slash or none). The path is always appended, never guessed
 * away: an instance may well live under a prefix named like the endpoint (http://host/search/).
 */
export function endpointUrl(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.hash = '';
  return url;
}

/** The headers every provider sends (the User-Agent is the caller's fetch's business). */
export function baseHeaders(): Record<string, string> {
  return { Accept: 'application/json' };
}
