// The one way the client talks HTTP: base URL and key, JSON in and out (or a
// form or raw bytes in: an uploaded file, a document as a file; bytes out: a
// downloaded file), the timeout, the caller's
// AbortSignal, and the mapping of every failure to a typed error (errors.ts).
// Resource classes (tasks.ts, sessions.ts) and the event stream build on it;
// none of them calls fetch itself.
import { ConnectionError, ConnectionTimeoutError, errorFromResponse } from './errors';

/** Where `npm start` serves by default, and the development key it creates when API_KEYS is unset. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_API_KEY = 'dev-key';
/** A synchronous run answers when the agent is done: minutes are normal, so the default is generous. */
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

export interface ClientOptions {
  /** Default: AGENT_URL, else http://127.0.0.1:8080 (`npm start`). */
  baseUrl?: string;
  /** Default: AGENT_API_KEY, else `dev-key` (the key `npm start` creates without API_KEYS). */
  apiKey?: string;
  /** A fetch to use instead of the global one (a proxy agent, a test that cuts connections). */
  fetch?: typeof fetch;
  /** Per request, until the whole answer is in; for streams, until the headers are. */
  timeoutMs?: number;
}

/** Options every call takes. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
  /** Extra headers (after the client's own, so they can override them). */
  headers?: Record<string, string>;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface SendOptions extends RequestOptions {
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as multipart/form-data instead of JSON (a file and its fields); fetch writes the Content-Type with its boundary. */
  form?: FormData;
  /** Sent as it is instead of JSON (a file's bytes, a string as UTF-8), as application/octet-stream. */
  raw?: Uint8Array | string;
  accept?: string;
  idempotencyKey?: string;
}

/** A response whose headers are in, plus the cleanup the caller runs once it has read the body. */
export interface OpenResponse {
  response: Response;
  /** Aborts the body read (the connection) if it is still open; idempotent. */
  close(): void;
  /** Whether the timeout fired (then the body read fails with an abort). */
  timedOut(): boolean;
}

export class HttpCore {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    // No process in a browser (the web console bundles this client): its caller passes both.
    const env = typeof process === 'undefined' ? {} : process.env;
    this.baseUrl = (opts.baseUrl ?? env.AGENT_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.apiKey = opts.apiKey ?? env.AGENT_API_KEY ?? DEFAULT_API_KEY;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Bound late, so a test that replaces globalThis.fetch after construction still reaches it.
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  /**
   * Sends a request and resolves once the headers are in. A non-2xx answer is
   * read and thrown as its typed error; no answer is a ConnectionError; the
   * caller's abort rethrows the signal's reason, as fetch does. `keepTimeout`
   * keeps the timeout running while the caller reads the body.
   */
  async open(method: string, path: string, opts: SendOptions & { keepTimeout?: boolean } = {}): Promise<OpenResponse> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: opts.accept ?? 'application/json',
    };
    let body: string | FormData | Uint8Array | undefined;
    if (opts.form !== undefined) {
      body = opts.form;
    } else if (opts.raw !== undefined) {
      body = opts.raw;
      headers['content-type'] = 'application/octet-stream';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    Object.assign(headers, opts.headers);

    const controller = new AbortController();
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => ((timedOut = true), controller.abort(new Error('timeout'))), timeoutMs)
        : undefined;
    const onAbort = () => controller.abort(opts.signal?.reason);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const release = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const close = () => {
      release();
      if (!controller.signal.aborted) controller.abort(new Error('closed by the client'));
    };
    const url = this.url(path, opts.query);

    let response: Response;
    try {
      // The cast: the DOM's types (the web console's build) take no Uint8Array of a shared buffer; none is ever sent.
      response = await this.fetchImpl(url, {
        method,
        headers,
        body: body as RequestInit['body'],
        signal: controller.signal,
      });
    } catch (err) {
      release();
      throw this.failure(err, url, opts.signal, timedOut, timeoutMs);
    }
    if (!opts.keepTimeout) clearTimeout(timer);
    if (!response.ok) {
      let text = '';
      try {
        text = await response.text();
      } catch {
        // A cut error body: the status still says what happened.
      }
      release();
      throw errorFromResponse(response.status, response.headers, text);
    }
    return { response, close, timedOut: () => timedOut };
  }

  /** A JSON call: resolves with the parsed body (undefined for 204). */
  json<T>(method: string, path: string, opts: SendOptions = {}): Promise<T> {
    return this.read(method, path, opts, async (res) => {
      const text = await res.text();
      return (text ? JSON.parse(text) : undefined) as T;
    });
  }

  /** A call whose answer is bytes (a file): resolves with the whole body. */
  bytes(method: string, path: string, opts: SendOptions = {}): Promise<Buffer> {
    return this.read(method, path, { accept: '*/*', ...opts }, async (res) => Buffer.from(await res.arrayBuffer()));
  }

  /** Opens the call and reads its whole body within the call's time limit; a failure named as the client names them. */
  private async read<T>(
    method: string,
    path: string,
    opts: SendOptions,
    body: (res: Response) => Promise<T>,
  ): Promise<T> {
    const open = await this.open(method, path, { ...opts, keepTimeout: true });
    try {
      return await body(open.response);
    } catch (err) {
      throw this.failure(
        err,
        this.url(path, opts.query),
        opts.signal,
        open.timedOut(),
        opts.timeoutMs ?? this.timeoutMs,
      );
    } finally {
      open.close();
    }
  }

  /** What a fetch or body read failure means to the caller. */
  failure(
    err: unknown,
    url: string,
    callerSignal: AbortSignal | undefined,
    timedOut: boolean,
    timeoutMs: number,
  ): unknown {
    if (callerSignal?.aborted) return callerSignal.reason ?? err;
    if (timedOut)
      return new ConnectionTimeoutError(`no complete answer from ${url} within ${timeoutMs} ms`, { cause: err });
    if (err instanceof SyntaxError)
      return new ConnectionError(`the answer from ${url} is not JSON: ${err.message}`, { cause: err });
    return new ConnectionError(`cannot reach ${url}: ${describeNetworkError(err)}`, { cause: err });
  }
}

/**
 * undici says "fetch failed" and keeps the reason (ECONNREFUSED, a reset) in
 * `cause`. Read by shape, not instanceof: the error may come from another realm
 * (a vm context, a test runner).
 */
export function describeNetworkError(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const parts = [typeof e?.message === 'string' ? e.message : String(err)];
  if (typeof e?.cause?.code === 'string') parts.push(e.cause.code);
  else if (typeof e?.cause?.message === 'string') parts.push(e.cause.message);
  return parts.join(': ');
}
