// The other processes' metrics the gateway's /metrics includes
// (METRICS_INCLUDE_URLS: the worker's endpoint under `npm start`). Each is
// fetched at scrape time with a short deadline; one that fails is left out of
// that scrape (aes_metrics_include_up says which), never failing it.
import type { Logger } from 'pino';
import { showUrl } from '../outbound/policy';

export interface Included {
  url: string;
  /** The URL without credentials or query, for labels and logs. */
  label: string;
  /** The exposition text; undefined when the fetch failed. */
  text?: string;
  error?: string;
}

export interface IncludeOptions {
  timeoutMs: number;
  /** METRICS_TOKEN, sent as a bearer token (the worker's endpoint asks for the same one). */
  token?: string;
  fetch?: typeof fetch;
}

export async function fetchIncluded(urls: readonly string[], opts: IncludeOptions): Promise<Included[]> {
  const get = opts.fetch ?? fetch;
  const headers: Record<string, string> = { accept: 'text/plain' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  return Promise.all(
    urls.map(async (url) => {
      const label = shownUrl(url);
      try {
        // The deadline covers the body too: a server that stops mid-answer is cut as well.
        const res = await get(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs) });
        const text = await res.text();
        if (!res.ok) return { url, label, error: `HTTP ${res.status}` };
        return { url, label, text };
      } catch (err) {
        const e = err as Error & { cause?: Error };
        return {
          url,
          label,
          error: e.name === 'TimeoutError' ? `no answer within ${opts.timeoutMs} ms` : (e.cause?.message ?? e.message),
        };
      }
    }),
  );
}

/** Logs an include that went down or came back once, not at every scrape. */
export function includeStateLogger(logger: Logger): (results: readonly Included[]) => void {
  const down = new Set<string>();
  return (results) => {
    for (const r of results) {
      if (r.error !== undefined && !down.has(r.url)) {
        down.add(r.url);
        logger.warn(
          { url: r.label, err: r.error },
          'metrics of an included endpoint unavailable; left out of /metrics',
        );
      } else if (r.error === undefined && down.delete(r.url)) {
        logger.info({ url: r.label }, 'metrics of an included endpoint available again');
      }
    }
  };
}

/** A URL as shown: no credentials, no query (either could hold a secret). */
export function shownUrl(raw: string): string {
  try {
    return showUrl(new URL(raw));
  } catch {
    return 'invalid URL';
  }
}
