// The web tools' and the browser's variables (docs/web.md), part of the one configuration schema (config.ts spreads
// them into envSchema), and the check that ties the search tool to a provider: web_search is
// offered only where a provider is configured.
import { z } from 'zod';

export const WEB_SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily'] as const;

export const webVariables = {
  /** Most bytes web_fetch reads of one response; the rest is not downloaded, and the model is told the page was cut. */
  WEB_FETCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(100 * 1024 * 1024)
    .default(10 * 1024 * 1024),
  /** Longest web_fetch, seconds, from the request to the last byte read (redirects included). */
  WEB_FETCH_TIMEOUT_S: z.coerce.number().int().min(1).max(600).default(30),
  /** The User-Agent of web_fetch's requests (and the search provider's): sites see who reads them. */
  WEB_USER_AGENT: z.string().default('AgentExecutionService/0.1 (web_fetch; an AI agent reading a page for its user)'),
  /**
   * The search provider of the web_search tool: `searxng` (self-hosted, its JSON API at
   * WEB_SEARCH_URL), `brave` (Brave Search API) or `tavily` (Tavily API). Unset: no web_search.
   */
  WEB_SEARCH_PROVIDER: z.enum(WEB_SEARCH_PROVIDERS).optional(),
  /** The provider's base URL: required for searxng (e.g. http://searx.internal:8080); brave and tavily default to their public API. */
  WEB_SEARCH_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The provider's API key (brave: X-Subscription-Token; tavily: the Bearer token); a secret, never logged. */
  WEB_SEARCH_API_KEY: z.string().optional(),
  /** The Chromium the browser tools drive; default Debian's (/usr/lib/chromium/chromium, else /usr/bin/chromium). */
  BROWSER_EXECUTABLE: z.string().optional(),
  /** Sessions' browser contexts open at once per worker; beyond, the least recently used is closed (its cookies lost). */
  BROWSER_MAX_CONTEXTS: z.coerce.number().int().min(1).max(200).default(8),
  /** A session's browser context unused this long is closed (its pages and cookies with it), seconds. */
  BROWSER_IDLE_CLOSE_S: z.coerce.number().int().min(10).default(600),
  /** Longest navigation or page action of a browser tool, seconds (a slower one is an error the model reads). */
  BROWSER_NAVIGATION_TIMEOUT_S: z.coerce.number().int().min(1).max(600).default(30),
  /** Pages one run may open (browser_navigate calls); more are refused, as an error the model reads. */
  BROWSER_MAX_PAGES_PER_RUN: z.coerce.number().int().min(1).default(50),
};

interface WebSearchSettings {
  BUILTIN_TOOLS: string[];
  WEB_SEARCH_PROVIDER?: (typeof WEB_SEARCH_PROVIDERS)[number];
  WEB_SEARCH_URL?: string;
  WEB_SEARCH_API_KEY?: string;
}

/**
 * The problems of the search settings (each a variable and a message), and the built-in tools
 * without web_search when no provider is configured. `namedTools` is BUILTIN_TOOLS as set: a
 * deployment that names web_search itself must configure a provider, while the default (the
 * `web` group) just goes without.
 */
export function checkWebSearch<T extends WebSearchSettings>(
  config: T,
  namedTools: string | undefined,
): { config: T; issues: { variable: string; message: string }[] } {
  const issues: { variable: string; message: string }[] = [];
  const provider = config.WEB_SEARCH_PROVIDER;
  if (provider === 'searxng' && !config.WEB_SEARCH_URL)
    issues.push({ variable: 'WEB_SEARCH_URL', message: 'required with WEB_SEARCH_PROVIDER=searxng (its base URL)' });
  if ((provider === 'brave' || provider === 'tavily') && !config.WEB_SEARCH_API_KEY)
    issues.push({ variable: 'WEB_SEARCH_API_KEY', message: `required with WEB_SEARCH_PROVIDER=${provider}` });
  if (provider) return { config, issues };
  const named = (namedTools ?? '').split(',').some((t) => t.trim() === 'web_search');
  if (named)
    issues.push({
      variable: 'BUILTIN_TOOLS',
      message: 'web_search needs a search provider: set WEB_SEARCH_PROVIDER (searxng, brave or tavily)',
    });
  return { config: { ...config, BUILTIN_TOOLS: config.BUILTIN_TOOLS.filter((t) => t !== 'web_search') }, issues };
}
