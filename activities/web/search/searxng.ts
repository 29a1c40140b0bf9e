// SearXNG's search API (docs.searxng.org, "Search API"): GET <base>/search with q, format=json and
// pageno; the answer's results[] carry title, url and content. The instance's own settings decide
// the language, safe search and engines (we send none of them), and it has no count parameter:
// it answers a page (about 20 results), cut here. Its JSON carries text, not HTML: a "<div>" in
// a snippet stays. An instance answers 403 when the json format is not enabled in its settings.yml
// (search.formats), which the error says.
import type { FetchLike, ProviderSettings, SearchProvider, SearchResult } from './providers';
import { baseHeaders, clampCount, endpointUrl, exchangeJson, missingList, toResults } from './provider-http';

const LABEL = 'SearXNG';

export function searxngProvider(settings: ProviderSettings, fetch: FetchLike): SearchProvider {
  const { apiKey } = settings;
  const headers = baseHeaders();
  // SearXNG itself takes no key. Some deployments sit behind a reverse proxy that wants a Bearer
  // token: WEB_SEARCH_API_KEY, when set, is sent as one; unset, no Authorization header at all.
  if (apiKey) headers.Authorization = `Bearer ${apiKey}`;

  return {
    name: 'searxng',
    async search(query: string, count: number, signal?: AbortSignal): Promise<SearchResult[]> {
      const n = clampCount(count);
      const url = endpointUrl(settings.baseUrl, '/search');
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('pageno', '1');
      const body = await exchangeJson(fetch, {
        label: LABEL,
        url,
        init: { method: 'GET', headers },
        apiKey,
        signal,
        explain: (status) => explain(status, !!apiKey),
      });
      const results = (body as { results?: unknown } | null)?.results;
      if (!Array.isArray(results)) throw missingList(LABEL, 'results[]');
      return toResults(results, n, { title: 'title', url: 'url', snippet: 'content', markup: false });
    },
  };
}

/** SearXNG's statuses that do not mean a refused key: the disabled json format, and a 401 with no key to send. */
function explain(status: number, keyed: boolean): string | undefined {
  if (status === 403 && !keyed)
    return `${LABEL} refused the search (HTTP 403): the instance does not serve format=json; enable json in search.formats of its settings.yml.`;
  if (status === 403)
    return `${LABEL} refused the search (HTTP 403): either the instance does not serve format=json (search.formats in its settings.yml) or the proxy in front of it refused the key; check both, and WEB_SEARCH_API_KEY.`;
  if (status === 401 && !keyed)
    return `${LABEL} asks for credentials (HTTP 401) and none are configured: set WEB_SEARCH_API_KEY if a proxy in front of it takes a Bearer token.`;
  return undefined;
}
