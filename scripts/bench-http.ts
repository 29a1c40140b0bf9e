// HTTP client side of `npm run bench`: keep-alive requests timed from the call
// to the last body byte, and an SSE reader that timestamps each chunk as it
// arrives. node:http is used rather than fetch because its per-request client
// cost is smaller and steadier, and on two shared cores every client-side
// microsecond shows up in the gateway's measured latency.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Timed {
  status: number;
  body: string;
  /** Call to last body byte, ms. */
  ms: number;
  /** The response's Server-Timing header, if any. */
  serverTiming?: string;
}


export interface HttpTarget {
  base: URL;
  agent: http.Agent;
  /** Bearer key; null sends no Authorization header. */
  key: string | null;
}

export function target(baseUrl: string, key: string | null, maxSockets: number): HttpTarget {
  // keepAlive + a socket cap equal to the client concurrency: every timed
  // request reuses a warm connection, as a real client library would.
  return { base: new URL(baseUrl), agent: new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 256) }), key };
}

/** Per-call overrides: another account's key on a shared agent, a timeout. */
export interface CallOptions {
  key?: string;
  timeoutMs?: number;
}

function headersFor(t: HttpTarget, body: string | undefined, key: string | undefined, extra: Record<string, string> = {}): http.OutgoingHttpHeaders {
  const h: http.OutgoingHttpHeaders = { ...extra };
  const k = key ?? t.key;
  if (k !== null) h.authorization = `Bearer ${k}`;
  if (body !== undefined) {
    h['content-type'] = 'application/json';
    h['content-length'] = Buffer.byteLength(body);
  }
  return h;
}

export function request(t: HttpTarget, method: string, path: string, json?: unknown, call: CallOptions = {}): Promise<Timed> {
  const timeoutMs = call.timeoutMs ?? 30_000;
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: t.base.hostname, port: t.base.port, method, path, agent: t.agent, headers: headersFor(t, body, call.key) },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const ms = performance.now() - t0;
          const serverTiming = res.headers['server-timing'];
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), ms, ...(typeof serverTiming === 'string' && { serverTiming }) });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface SseEvent {
  id?: string;
  data: any;
  /** performance.now() when the chunk carrying this event's end arrived. */
  at: number;
}

export interface SseStream {
  status: number;
  /** performance.now() when the response headers arrived. */
  headersAt: number;
  /** Resolves when the server ends the stream (or close() is called). */
  done: Promise<void>;
  close(): void;
}

/**
 * Opens an SSE stream (GET, or POST with a JSON body) and hands every `data:`
 * event to onEvent with the arrival time of the bytes that completed it.
 * Rejects only if the response never starts; a non-200 resolves with its status
 * and the body is discarded.
 */
export function openSse(t: HttpTarget, method: 'GET' | 'POST', path: string, json: unknown, onEvent: (ev: SseEvent) => void, call: CallOptions = {}): Promise<SseStream> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: t.base.hostname, port: t.base.port, method, path, agent: t.agent, headers: headersFor(t, body, call.key, { accept: 'text/event-stream' }) }, (res) => {
      const headersAt = performance.now();
      let buf = '';
      const done = new Promise<void>((resolveDone) => {
        res.on('end', resolveDone);
        res.on('close', resolveDone);
        res.on('error', () => resolveDone());
      });
      if (res.statusCode !== 200) {
        res.resume();
        resolve({ status: res.statusCode ?? 0, headersAt, done, close: () => req.destroy() });
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        // One timestamp per chunk, taken before any parsing, so parsing cost
        // is not billed to the service.
        const at = performance.now();
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id: string | undefined;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length === 0) continue; // comments: stream open, heartbeats
          let parsed: unknown;
          try {
            parsed = JSON.parse(data.join('\n'));
          } catch {
            parsed = { type: 'unparseable', raw: data.join('\n') };
          }
          onEvent({ id, data: parsed, at });
        }
      });
      resolve({ status: res.statusCode, headersAt, done, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `count` jobs with at most `concurrency` in flight (a closed loop of clients). */
export async function closedLoop(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await job(next++);
  });
  await Promise.all(lanes);
}
