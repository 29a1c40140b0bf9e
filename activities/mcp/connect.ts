// Opening an MCP client session: Streamable HTTP first and, when the server
// answers that with a 4xx (an older server, or an `/sse` URL), the legacy
// HTTP+SSE transport. Every request goes through the outbound policy's fetch,
// so connect-time DNS answers and redirects are checked too. A token becomes
// `Authorization: Bearer ...`; without one nothing is sent.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../../workflows/types';

export type { FetchLike };

export type McpTransportName = 'streamable-http' | 'sse';

export interface OpenedClient {
  client: Client;
  transport: McpTransportName;
}

const CLIENT_INFO = { name: 'agent-execution-service', version: '0.1.0' };

/** The HTTP status an MCP transport error carries, if any. */
export function transportStatus(err: unknown): number | undefined {
  if (err instanceof StreamableHTTPError || err instanceof SseError)
    return typeof err.code === 'number' && err.code > 0 ? err.code : undefined;
  return undefined;
}

function requestInit(server: McpServerConfig): RequestInit {
  return server.token ? { headers: { Authorization: `Bearer ${server.token}` } } : {};
}

async function connectWith(
  transport: StreamableHTTPClientTransport | SSEClientTransport,
  timeoutMs: number,
): Promise<Client> {
  const client = new Client(CLIENT_INFO);
  try {
    await client.connect(transport, { timeout: timeoutMs });
    return client;
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

export async function openMcpClient(
  server: McpServerConfig,
  fetch: FetchLike,
  timeoutMs: number,
): Promise<OpenedClient> {
  const url = new URL(server.url);
  try {
    const client = await connectWith(
      new StreamableHTTPClientTransport(url, { requestInit: requestInit(server), fetch }),
      timeoutMs,
    );
    return { client, transport: 'streamable-http' };
  } catch (err) {
    const status = transportStatus(err);
    // 401/403 would answer the same on the other transport; other errors are not about the transport.
    if (status === undefined || status < 400 || status >= 500 || status === 401 || status === 403) throw err;
  }
  const client = await connectWith(new SSEClientTransport(url, { requestInit: requestInit(server), fetch }), timeoutMs);
  return { client, transport: 'sse' };
}
