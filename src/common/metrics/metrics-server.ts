// The worker's metrics endpoint (WORKER_METRICS_PORT): a bare HTTP server with
// one route, GET /metrics, for Prometheus or for the gateway, whose /metrics
// includes it (METRICS_INCLUDE_URLS). With METRICS_TOKEN set it asks for the
// same bearer token as the gateway's /metrics (the gateway sends it).
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Whether an Authorization header carries `token` (always true without one); constant time. */
export function bearerAccepted(header: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return sent !== undefined && timingSafeEqual(digest(sent), digest(token));
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function serveMetrics(
  registry: Registry,
  opts: { port: number; host: string; token?: string; logger: Logger },
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const json = (status: number, type: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type, message } }));
    };
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics')
      return json(404, 'not_found', 'the only route here is GET /metrics');
    if (!bearerAccepted(req.headers.authorization, opts.token))
      return json(401, 'unauthorized', 'metrics need "Authorization: Bearer <METRICS_TOKEN>"');
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(text);
      },
      (err: Error) => {
        opts.logger.warn({ err: err.message }, 'metrics could not be collected');
        json(500, 'internal', 'metrics could not be collected');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  // The scrape server must not keep a stopping process alive.
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
