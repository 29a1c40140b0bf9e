// An OTLP/HTTP trace receiver for tests: a plain node:http server that takes
// POST /v1/traces in OTLP JSON (what @opentelemetry/exporter-trace-otlp-http
// sends) and keeps every span, flattened with its service and resource.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  service: string;
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

const plain = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v;
const attrs = (a: OtlpAttributes): Record<string, unknown> =>
  Object.fromEntries((a ?? []).map(({ key, value }) => [key, plain(value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body as received (decompressed), for checks on what never appears. */
  readonly bodies: string[] = [];
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  /** Listens on a free loopback port; resolves to the base URL to give OTEL_EXPORTER_OTLP_ENDPOINT. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const text = body.toString('utf8');
      this.bodies.push(text);
      const json = JSON.parse(text) as {
        resourceSpans?: {
          resource?: { attributes?: OtlpAttributes };
          scopeSpans?: {
            spans?: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: OtlpAttributes;
            }[];
          }[];
        }[];
      };
      for (const rs of json.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            this.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId && { parentSpanId: s.parentSpanId }),
              name: s.name,
              kind: s.kind,
              service: String(resource['service.name']),
              resource,
              attributes: attrs(s.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }
}
