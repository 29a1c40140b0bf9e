// One GET of web_fetch: through the outbound policy's fetch (every URL and redirect checked), with
// a time limit over the whole exchange and a cap on the bytes read. A body over the cap is not
// downloaded further: the caller gets its first bytes and says the page was cut.

/** The fetch to use (policyFetch of src/common/outbound/fetch.ts in the worker). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface FetchedBody {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  statusText: string;
  contentType: string | undefined;
  bytes: Uint8Array;
  /** The body was longer than the cap: `bytes` are its first bytes only. */
  truncated: boolean;
}

export interface ReadBodyOptions {
  maxBytes: number;
  userAgent: string;
  signal: AbortSignal;
}

// What web_fetch can use; anything else still comes (a server may ignore Accept).
const ACCEPT =
  'text/html,application/xhtml+xml,application/pdf;q=0.9,application/json;q=0.9,text/plain;q=0.9,text/*;q=0.8,*/*;q=0.5';

export async function readBody(fetch: FetchLike, url: string, opts: ReadBodyOptions): Promise<FetchedBody> {
  const res = await fetch(url, {
    headers: { 'user-agent': opts.userAgent, accept: ACCEPT },
    signal: opts.signal,
  });
  const { bytes, truncated } = await readCapped(res, opts.maxBytes);
  return {
    url: res.url || url,
    status: res.status,
    statusText: res.statusText,
    contentType: res.headers.get('content-type') ?? undefined,
    bytes,
    truncated,
  };
}

/** At most `max` bytes of the body (decompressed, so a small gzip bomb is cut too); the rest is never read. */
async function readCapped(res: Response, max: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > max) {
        chunks.push(value.subarray(0, max - size));
        size = max;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}
