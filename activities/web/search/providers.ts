// The web_search tool's providers behind one interface, chosen by configuration
// (WEB_SEARCH_PROVIDER, WEB_SEARCH_URL, WEB_SEARCH_API_KEY): SearXNG (self-hosted, its JSON API),
// the Brave Search API and the Tavily API. Each file speaks its provider's documented request and
// answer; provider-http.ts holds what they share (the bounded exchange, the failures, the text).
import { braveProvider } from './brave';
import { searxngProvider } from './searxng';
import { tavilyProvider } from './tavily';

export { SearchProviderError } from './provider-http';

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export type SearchProviderName = 'searxng' | 'brave' | 'tavily';

export interface SearchProviderConfig {
  provider: SearchProviderName;
  /** Base URL (a path prefix is kept); unset: SEARCH_DEFAULT_URLS. */
  url?: string;
  apiKey?: string;
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface SearchProvider {
  readonly name: SearchProviderName;
  /**
   * At most `count` results (1..20; a count outside is clamped). Throws SearchProviderError for an
   * answer that is an error; a connection error is thrown as it came (the caller retries those).
   */
  search(query: string, count: number, signal?: AbortSignal): Promise<SearchResult[]>;
}

/** What a provider's file is built from: the config checked, its base URL resolved. */
export interface ProviderSettings {
  baseUrl: string;
  apiKey?: string;
}

/** The provider's public endpoint when WEB_SEARCH_URL is unset (searxng has none: self-hosted). */
export const SEARCH_DEFAULT_URLS: Readonly<Partial<Record<SearchProviderName, string>>> = Object.freeze({
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
});

const BUILDERS: Readonly<Record<SearchProviderName, (s: ProviderSettings, fetch: FetchLike) => SearchProvider>> = {
  searxng: searxngProvider,
  brave: braveProvider,
  tavily: tavilyProvider,
};

/**
 * The configured provider. Throws a plain Error naming the variable to set: searxng needs
 * WEB_SEARCH_URL (there is no public default), brave and tavily need WEB_SEARCH_API_KEY.
 */
export function createSearchProvider(config: SearchProviderConfig, fetch: FetchLike): SearchProvider {
  const build = Object.hasOwn(BUILDERS, config.provider) ? BUILDERS[config.provider] : undefined;
  if (!build)
    throw new Error(`unknown search provider ${JSON.stringify(config.provider)}: use searxng, brave or tavily`);
  const url = config.url?.trim() || SEARCH_DEFAULT_URLS[config.provider];
  if (!url)
    throw new Error(`the ${config.provider} search provider needs WEB_SEARCH_URL (the base URL of its instance)`);
  if (!isHttpUrl(url))
    throw new Error(`WEB_SEARCH_URL must be an http(s) URL for the ${config.provider} search provider`);
  const apiKey = config.apiKey?.trim() || undefined;
  if (!apiKey && config.provider !== 'searxng')
    throw new Error(`the ${config.provider} search provider needs WEB_SEARCH_API_KEY`);
  return build({ baseUrl: url, apiKey }, fetch);
}

function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}
