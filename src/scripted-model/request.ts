// Validation of chat completion requests. Lenient on purpose (unknown fields pass
// through, `model` may be any name) but strict enough that the script never
// meets a shape it cannot read.
import { z } from 'zod';

const ToolCallSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
});

const MessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(ToolCallSchema).nullish(),
  tool_call_id: z.string().optional(),
  reasoning_content: z.string().nullish(),
});

const ToolSchema = z.looseObject({
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), description: z.string().optional(), parameters: z.unknown().optional() }),
});

export const ChatRequestSchema = z.looseObject({
  model: z.string().default('scripted-base'),
  messages: z.array(MessageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(ToolSchema).nullish(),
  tool_choice: z.unknown().optional(),
  response_format: z
    .looseObject({
      type: z.string(),
      json_schema: z.looseObject({ name: z.string().optional(), schema: z.unknown().optional(), strict: z.boolean().nullish() }).optional(),
    })
    .nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
});

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];
export type ToolDef = NonNullable<ChatRequest['tools']>[number];

/** The first problem with a body, phrased like OpenAI's messages, and the offending field. */
export function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : null;
  // zod v4 leaves the input out of issues, so absence shows only in the message.
  if (issue?.code === 'invalid_type' && /received undefined/.test(issue.message) && param) {
    return { message: `Missing required parameter: '${param}'.`, param };
  }
  return { message: `Invalid value for '${param ?? 'body'}': ${issue?.message ?? 'invalid request'}`, param };
}

/** Plain text of a message; array content contributes its text parts only. */
export function messageText(m: Pick<ChatMessage, 'content'>): string {
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return m.content
    .map((part) => (part && typeof part === 'object' && typeof (part as any).text === 'string' ? (part as any).text : ''))
    .filter(Boolean)
    .join('\n');
}

export function hasToolCalls(m: ChatMessage): boolean {
  return m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
}
