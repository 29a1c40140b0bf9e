// The web tools as this worker runs them (docs/web.md): web_fetch through the outbound policy, and
// web_search through the configured provider. The provider's host is the operator's choice, so it
// is allowed even when private (a self-hosted SearXNG); everything else a search or a fetch sends
// goes through the same policy as MCP calls and commands.
import type { Logger } from 'pino';
import type { Config } from '../common/config';
import { policyFetch, type PolicyFetch } from '../common/outbound/fetch';
import { OutboundPolicy } from '../common/outbound/policy';
import type { WebTools } from '../../activities/web/web-activities';
import { webFetchTool } from '../../activities/web/web-fetch';
import { PageThread } from '../../activities/web/page-thread/page-thread';
import { webSearchTool } from '../../activities/web/web-search';
import { createSearchProvider, SEARCH_DEFAULT_URLS } from '../../activities/web/search/providers';

type WebConfig = Pick<
  Config,
  | 'BUILTIN_TOOLS'
  | 'WEB_FETCH_MAX_BYTES'
  | 'WEB_FETCH_TIMEOUT_S'
  | 'WEB_USER_AGENT'
  | 'WEB_SEARCH_PROVIDER'
  | 'WEB_SEARCH_URL'
  | 'WEB_SEARCH_API_KEY'
  | 'WORKSPACE_MAX_BYTES'
  | 'WORKSPACE_MAX_FILES'
>;

/** The web tools the deployment offers, or undefined when it offers none. */
export function webTools(
  config: WebConfig,
  deps: { policy: OutboundPolicy; logger: Logger },
): { tools: WebTools; close(): Promise<void> } | undefined {
  const offered = (name: string) => config.BUILTIN_TOOLS.includes(name);
  if (!offered('web_fetch') && !offered('web_search')) return undefined;
  const timeoutMs = config.WEB_FETCH_TIMEOUT_S * 1000;
  const pools: PolicyFetch[] = [];
  const tools: Record<string, WebTools[string]> = {};
  let pages: PageThread | undefined;
  if (offered('web_fetch')) {
    const fetch = policyFetch(deps.policy);
    pools.push(fetch);
    // Pages are made readable off the main thread, each within the fetch's time limit again.
    pages = new PageThread({ timeoutMs, logger: deps.logger });
    const thread = pages;
    tools.web_fetch = webFetchTool({
      fetch,
      maxBytes: config.WEB_FETCH_MAX_BYTES,
      timeoutMs,
      userAgent: config.WEB_USER_AGENT,
      quota: { maxBytes: config.WORKSPACE_MAX_BYTES, maxFiles: config.WORKSPACE_MAX_FILES },
      convert: (input) => thread.convert(input),
    });
  }
  if (offered('web_search') && config.WEB_SEARCH_PROVIDER) {
    const url = config.WEB_SEARCH_URL ?? SEARCH_DEFAULT_URLS[config.WEB_SEARCH_PROVIDER];
    const fetch = policyFetch(withHost(deps.policy, new URL(url!).hostname));
    pools.push(fetch);
    const provider = createSearchProvider(
      { provider: config.WEB_SEARCH_PROVIDER, url, apiKey: config.WEB_SEARCH_API_KEY },
      withUserAgent(fetch, config.WEB_USER_AGENT),
    );
    tools.web_search = webSearchTool(provider, timeoutMs);
    deps.logger.info({ provider: config.WEB_SEARCH_PROVIDER, url }, 'web search ready');
  }
  return {
    tools,
    close: async () => {
      await pages?.close();
      await Promise.all(pools.map((p) => p.close()));
    },
  };
}

/** The policy with the provider's host allowed besides OUTBOUND_ALLOWLIST. */
function withHost(policy: OutboundPolicy, hostname: string): OutboundPolicy {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return new OutboundPolicy({ hosts: new Set([...policy.allowlist.hosts, host]), cidrs: policy.allowlist.cidrs });
}

function withUserAgent(fetch: PolicyFetch, userAgent: string): PolicyFetch {
  const wrapped = (url: string | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('user-agent', userAgent);
    return fetch(url, { ...init, headers });
  };
  return Object.assign(wrapped, { close: () => fetch.close() });
}
