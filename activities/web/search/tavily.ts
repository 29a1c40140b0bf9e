// Tavily's search (docs.tavily.com, API reference "Tavily Search"): POST <base>/search with a JSON
// body (query, max_results, search_depth) and the key as `Authorization: Bearer tvly-…`; the
// answer's results[] carry title, url, content and score. search_depth is "basic" on purpose: an
// advanced search costs twice the credits. Its errors keep the message in {detail: {error}}.
import type { FetchLike, ProviderSettings, SearchProvider, SearchResult } from './providers';
import { baseHeaders, clampCount, endpointUrl, exchangeJson, missingList, toResults } from './provider-http';

const LABEL = 'Tavily';

export function tavilyProvider(settings: ProviderSettings, fetch: FetchLike): SearchProvider {
  const apiKey = settings.apiKey ?? '';
  const headers = {
    ...baseHeaders(),
    'Content-Type': 'application/json',
    Authorization: `Bearer ${apiKey}`,
  };

  return {
    name: 'tavily',
    async search(query: string, count: number, signal?: AbortSignal): Promise<SearchResult[]> {
      const n = clampCount(count);
      const body = await exchangeJson(fetch, {
        label: LABEL,
        url: endpointUrl(settings.baseUrl, '/search'),
        init: { method: 'POST', headers, body: JSON.stringify({ query, max_results: n, search_depth: 'basic' }) },
        apiKey,
        signal,
      });
      const results = (body as { results?: unknown } | null)?.results;
      if (!Array.isArray(results)) throw missingList(LABEL, 'results[]');
      return toResults(results, n, { title: 'title', url: 'url', snippet: 'content', markup: false });
    },
  };
}
