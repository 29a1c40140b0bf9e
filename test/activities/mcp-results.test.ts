// MCP results as the text the model reads, and what each kind of failure
// means for the run (a result, a retry, or not retried), without the token.
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toolResultText } from '../../activities/mcp/results';
import { classifyMcpError, errorText, unavailable } from '../../activities/mcp/errors';
import { OutboundRefusedError } from '../../src/common/outbound/policy';

test('content blocks become text; structured content when there is no text; isError marked', () => {
  expect(
    toolResultText({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    }),
  ).toEqual({ content: 'a\nb', isError: false });
  expect(toolResultText({ content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] }).content).toBe(
    '[image: image/png, 3 bytes]',
  );
  expect(
    toolResultText({ content: [{ type: 'resource', resource: { uri: 'file:///x', text: 'inside' } }] }).content,
  ).toBe('inside');
  expect(toolResultText({ content: [{ type: 'resource_link', uri: 'file:///y', name: 'y' }] }).content).toBe(
    '[resource link: file:///y (y)]',
  );
  expect(toolResultText({ content: [], structuredContent: { n: 1 } }).content).toBe('{"n":1}');
  expect(toolResultText({ toolResult: { old: true } }).content).toBe('{"old":true}');
  expect(toolResultText({ content: [{ type: 'text', text: 'bad input' }], isError: true })).toEqual({
    content: 'Error: bad input',
    isError: true,
  });
  expect(toolResultText({ content: [], isError: true }).content).toBe('Error: the tool reported an error');
});

test('failures are classified: tool errors, timeouts, transport, lost sessions, permanent refusals, our own faults', () => {
  expect(classifyMcpError(new McpError(ErrorCode.InvalidParams, 'bad'))).toBe('tool');
  expect(classifyMcpError(new McpError(ErrorCode.RequestTimeout, 'slow'))).toBe('timeout');
  expect(classifyMcpError(new McpError(ErrorCode.ConnectionClosed, 'closed'))).toBe('transport');
  expect(classifyMcpError(new StreamableHTTPError(404, 'Session not found'))).toBe('lost-session');
  expect(classifyMcpError(new StreamableHTTPError(503, 'busy'))).toBe('transport');
  expect(classifyMcpError(new StreamableHTTPError(429, 'slow down'))).toBe('transport');
  expect(classifyMcpError(new StreamableHTTPError(401, 'no'))).toBe('permanent');
  expect(classifyMcpError(new OutboundRefusedError('refused', 'blocked-address'))).toBe('permanent');
  expect(classifyMcpError(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }))).toBe(
    'transport',
  );
  expect(classifyMcpError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe('internal');
});

test('messages never carry the token nor the URL query; mcp_unavailable names the server', () => {
  const server = { name: 'srv', url: 'https://mcp.example.com/mcp?key=QUERYSECRET', token: 'tok-SECRET-1' };
  expect(errorText(new Error('server said: Bearer tok-SECRET-1 is wrong'), server)).toBe(
    'server said: Bearer [redacted] is wrong',
  );
  const f = unavailable(new StreamableHTTPError(401, 'Unauthorized tok-SECRET-1'), server);
  expect(f).toMatchObject({ type: 'mcp_unavailable', nonRetryable: true });
  expect(f.message).toContain('"srv" (https://mcp.example.com/mcp)');
  expect(f.message).toContain('HTTP 401');
  expect(f.message).not.toMatch(/SECRET/);
  expect(
    unavailable(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), server).nonRetryable,
  ).toBe(false);
});
