// The web_search tool (workflows/web-tools.ts): the configured provider's results as numbered
// lines the model reads (title, URL, snippet), for it to read the pages it picks with web_fetch.
// A provider's refusal (a bad key, a rate limit, its own failure) is an answer; a connection that
// failed is thrown, for Temporal to try again.
import { WEB_SEARCH_MAX_RESULTS } from '../../workflows/tool-registry';
import { ToolInputError } from '../tools/builtin';
import { type SearchProvider, type SearchResult, SearchProviderError } from './search/providers';
import type { WebTool } from './web-activities';

const DEFAULT_COUNT = 5;

export function webSearchTool(provider: SearchProvider, timeoutMs: number): WebTool {
  return async (args, _ws, call) => {
    const { query, count = DEFAULT_COUNT } = args;
    if (typeof query !== 'string' || !query.trim()) throw new ToolInputError('query must be a non-empty string');
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > WEB_SEARCH_MAX_RESULTS)
      throw new ToolInputError(`count must be an integer from 1 to ${WEB_SEARCH_MAX_RESULTS}`);
    const timeout = AbortSignal.timeout(timeoutMs);
    let results: SearchResult[];
    try {
      results = await provider.search(query.trim(), count, AbortSignal.any([call.signal, timeout]));
    } catch (err) {
      if (call.signal.aborted) throw err;
      if (err instanceof SearchProviderError) return { text: `Error: ${err.message}`, isError: true };
      if (timeout.aborted)
        return {
          text: `Error: the search provider did not answer within ${timeoutMs / 1000} s; try again later.`,
          isError: true,
        };
      throw err;
    }
    return { text: formatResults(query.trim(), results) };
  };
}

export function formatResults(query: string, results: readonly SearchResult[]): string {
  if (results.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const lines = results.map(
    (r, i) => `${i + 1}. ${r.title || '(untitled)'}\n   ${r.url}${r.snippet ? `\n   ${r.snippet}` : ''}`,
  );
  return `Results for ${JSON.stringify(query)}:\n\n${lines.join('\n\n')}`;
}
