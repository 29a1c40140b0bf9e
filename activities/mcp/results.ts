// An MCP tool result as the text the model reads: text blocks as they are,
// other blocks described (an image by type and size, a resource by its text or
// URI), structured content as JSON when there is no text. isError results are
// errors for the model, marked as such.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type Block = CallToolResult['content'][number];

function blockText(b: Block): string {
  switch (b.type) {
    case 'text':
      return b.text;
    case 'image':
    case 'audio':
      return `[${b.type}: ${b.mimeType}, ${Math.floor((b.data.length * 3) / 4)} bytes]`;
    case 'resource':
      return 'text' in b.resource && typeof b.resource.text === 'string'
        ? b.resource.text
        : `[resource: ${b.resource.uri}]`;
    case 'resource_link':
      return `[resource link: ${b.uri}${b.name ? ` (${b.name})` : ''}]`;
    default:
      return JSON.stringify(b);
  }
}

export function toolResultText(result: unknown): { content: string; isError: boolean } {
  const r = result as Partial<CallToolResult> & { toolResult?: unknown };
  const blocks = Array.isArray(r.content) ? r.content : [];
  let text = blocks.map(blockText).join('\n');
  if (!text && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent);
  // Servers of the 2024-10-07 protocol answer { toolResult }.
  if (!text && r.toolResult !== undefined)
    text = typeof r.toolResult === 'string' ? r.toolResult : JSON.stringify(r.toolResult);
  const isError = r.isError === true;
  if (isError)
    return { content: text.startsWith('Error') ? text : `Error: ${text || 'the tool reported an error'}`, isError };
  return { content: text, isError };
}
