// The Brave Search API's web search (api-dashboard.search.brave.com, "Web search"): GET
// <base>/res/v1/web/search with q and count (at most 20), the key in X-Subscription-Token and
// Accept: application/json; the answer (type "search") keeps its results in web.results[] with
// title, url and description. Descriptions are HTML: the query's words in <strong> (the
// text_decorations default) and entities, made plain here. Brave answers a bad key with 422 and
// an ErrorResponse whose code is SUBSCRIPTION_TOKEN_INVALID, not 401: read as a refused key too.
import type { FetchLike, ProviderSettings, SearchProvider, SearchResult } from './providers';
import { baseHeaders, clampCount, endpointUrl, exchangeJson, missingList, toResults } from './provider-http';

const LABEL = 'Brave Search';

export function braveProvider(settings: ProviderSettings, fetch: FetchLike): SearchProvider {
  const apiKey = settings.apiKey ?? '';
  const headers = { ...baseHeaders(), 'X-Subscription-Token': apiKey };

  return {
    name: 'brave',
    async search(query: string, count: number, signal?: AbortSignal): Promise<SearchResult[]> {
      const n = clampCount(count);
      const url = endpointUrl(settings.baseUrl, '/res/v1/web/search');
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(n));
      const body = await exchangeJson(fetch, {
        label: LABEL,
        url,
        init: { method: 'GET', headers },
        apiKey,
        signal,
        explain,
      });
      const answer = body as { type?: unknown; web?: { results?: unknown } } | null;
      // `web` is absent from a "search" answer that found no web page: no results, not an error.
      if (answer?.web === undefined && answer?.type === 'search') return [];
      const results = answer?.web?.results;
      if (!Array.isArray(results)) throw missingList(LABEL, 'web.results[]');
      return toResults(results, n, { title: 'title', url: 'url', snippet: 'description', markup: true });
    },
  };
}

/** An ErrorResponse about the key or its subscription (422 SUBSCRIPTION_TOKEN_INVALID, 404 SUBSCRIPTION_NOT_FOUND) is a refused key. */
function explain(status: number, body: unknown, detail: string | undefined): string | undefined {
  const code = errorCode(body);
  if (!code?.startsWith('SUBSCRIPTION_')) return undefined;
  return `${LABEL} refused the API key (HTTP ${status}${detail ? `: ${detail}` : ''}); check WEB_SEARCH_API_KEY.`;
}

/** `error.code`, or the first of `errors[].code` (both shapes appear in Brave's documentation). */
function errorCode(body: unknown): string | undefined {
  const b = body as { error?: { code?: unknown }; errors?: { code?: unknown }[] } | null;
  const code = b?.error?.code ?? (Array.isArray(b?.errors) ? b.errors[0]?.code : undefined);
  return typeof code === 'string' ? code : undefined;
}
