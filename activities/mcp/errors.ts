// What an MCP failure means for the run. A tool's own error (an isError result,
// a JSON-RPC error such as invalid params) is a result the model reads; a
// transport error (connection refused or reset, 5xx, a lost session) is
// retried by Temporal; a refusal of the outbound policy, 401/403 and other 4xx
// will answer the same again: not retried. Anything else is a fault of ours,
// retried so a fixed worker can finish, but named as what it is. Messages never
// carry the token (scrubbed) nor a URL's query string.
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { OutboundRefusedError, showUrl } from '../../src/common/outbound/policy';
import { isConnectionFailure } from '../connection-errors';
import type { McpServerConfig } from '../../workflows/types';
import { transportStatus } from './connect';

/** `scheme://host[:port]/path` of a server (the outbound policy's showUrl): what messages and logs may show. */
function shownUrl(server: McpServerConfig): string {
  return URL.canParse(server.url) ? showUrl(new URL(server.url)) : '(invalid URL)';
}

/** The error's message, its causes' codes, without the server's token. */
export function errorText(err: unknown, server: McpServerConfig): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  let text = e?.message ?? String(err);
  const cause = e?.cause?.code ?? e?.cause?.message;
  if (cause && !text.includes(cause)) text += ` (${cause})`;
  if (server.token) text = text.split(server.token).join('[redacted]');
  return text.slice(0, 500);
}

export type McpFailureKind = 'tool' | 'timeout' | 'transport' | 'lost-session' | 'permanent' | 'internal';

export function classifyMcpError(err: unknown): McpFailureKind {
  if (err instanceof OutboundRefusedError) return 'permanent';
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return 'timeout';
    if (err.code === ErrorCode.ConnectionClosed) return 'transport';
    return 'tool';
  }
  const status = transportStatus(err);
  if (status === 404) return 'lost-session';
  if (status !== undefined) return status >= 500 || status === 408 || status === 429 ? 'transport' : 'permanent';
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const text = `${e?.message ?? ''} ${e?.cause?.code ?? ''} ${e?.cause?.message ?? ''}`;
  if (
    isConnectionFailure(text) ||
    e?.name === 'AbortError' ||
    e?.name === 'SseError' ||
    e?.name === 'StreamableHTTPError'
  )
    return 'transport';
  return 'internal';
}

/** The failure a server that could not be listed ends the run with: `mcp_unavailable`, naming it. */
export function unavailable(err: unknown, server: McpServerConfig): ApplicationFailure {
  const kind = classifyMcpError(err);
  const status = transportStatus(err);
  const why =
    status === 401 || status === 403
      ? `it refused the credentials (HTTP ${status}): ${errorText(err, server)}`
      : errorText(err, server);
  return ApplicationFailure.create({
    type: 'mcp_unavailable',
    message: `the MCP server "${server.name}" (${shownUrl(server)}) could not be used: ${why}`,
    nonRetryable: kind === 'permanent',
  });
}

/** The failure a tool call's transport error is retried with (or, when permanent, handed to the model as an error). */
export function callFailure(err: unknown, server: McpServerConfig, kind: McpFailureKind): ApplicationFailure {
  const message = `the MCP server "${server.name}" (${shownUrl(server)}) failed: ${errorText(err, server)}`;
  if (kind === 'permanent') return ApplicationFailure.nonRetryable(message, 'mcp_refused');
  if (kind === 'internal') return ApplicationFailure.retryable(message, 'McpClientError');
  return ApplicationFailure.retryable(message, 'mcp_transport');
}
