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
      json_schema: z
        .looseObject({ name: z.string().optional(), schema: z.unknown().optional(), strict: z.boolean().nullish() })
        .optional(),
    })
    .nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
});

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];
export type ToolDef = NonNullable<ChatRequest['tools']>[number];

// A fast path for the common case. A tool-using agent replays its whole
// conversation (hundreds of tool messages) on every request, and zod costs
// several times a JSON.parse of the body. `plainChatRequest` accepts only bodies
// the schema above certainly accepts, and returns what the schema would (loose
// objects pass through unchanged; `model` gets its default); anything else
// goes through zod, which also phrases the errors. Keep the two in step: the
// test in directives.test.ts compares them.

// Globals used once per message are kept in module constants: under jest the
// code runs in a vm context, where every global lookup (Array, Number, ...) is
// about a hundred times slower than a local one.
const isArray = Array.isArray;
const isSafeInteger = Number.isSafeInteger;
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !isArray(v);
const optStr = (v: unknown) => v === undefined || typeof v === 'string';
const nullish = (v: unknown) => v === undefined || v === null;
const posInt = (v: unknown) => nullish(v) || (isSafeInteger(v) && (v as number) > 0);
const fnOk = (f: unknown, extra: (f: Record<string, unknown>) => boolean) =>
  isObj(f) && typeof f.name === 'string' && extra(f);

function plainMessage(m: unknown): boolean {
  if (!isObj(m) || typeof m.role !== 'string' || !ROLES.has(m.role)) return false;
  const c = m.content;
  if (!(c === undefined || c === null || typeof c === 'string' || isArray(c))) return false;
  if (
    !optStr(m.name) ||
    !optStr(m.tool_call_id) ||
    !(nullish(m.reasoning_content) || typeof m.reasoning_content === 'string')
  )
    return false;
  if (nullish(m.tool_calls)) return true;
  if (!isArray(m.tool_calls)) return false;
  return m.tool_calls.every(
    (t) => isObj(t) && optStr(t.id) && optStr(t.type) && fnOk(t.function, (f) => optStr(f.arguments)),
  );
}

/** The body as ChatRequestSchema would return it, when it is plainly valid; undefined means "ask zod". */
export function plainChatRequest(body: unknown): ChatRequest | undefined {
  if (!isObj(body) || !optStr(body.model)) return undefined;
  const { messages, tools, stream_options: so, response_format: rf } = body;
  if (!isArray(messages) || messages.length === 0 || !messages.every(plainMessage)) return undefined;
  if (!(nullish(body.stream) || typeof body.stream === 'boolean')) return undefined;
  if (!(nullish(so) || (isObj(so) && (nullish(so.include_usage) || typeof so.include_usage === 'boolean'))))
    return undefined;
  if (
    !nullish(tools) &&
    !(
      isArray(tools) && tools.every((t) => isObj(t) && optStr(t.type) && fnOk(t.function, (f) => optStr(f.description)))
    )
  )
    return undefined;
  if (!nullish(rf)) {
    if (!isObj(rf) || typeof rf.type !== 'string') return undefined;
    const js = rf.json_schema;
    if (!(js === undefined || (isObj(js) && optStr(js.name) && (nullish(js.strict) || typeof js.strict === 'boolean'))))
      return undefined;
  }
  if (!posInt(body.max_tokens) || !posInt(body.max_completion_tokens)) return undefined;
  return (body.model === undefined ? { ...body, model: 'scripted-base' } : body) as ChatRequest;
}

/** Validates a request body: the fast path when it is plainly valid, zod otherwise. */
export function parseChatRequest(
  body: unknown,
): { success: true; data: ChatRequest } | { success: false; error: z.ZodError } {
  const plain = plainChatRequest(body);
  if (plain) return { success: true, data: plain };
  const parsed = ChatRequestSchema.safeParse(body);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, error: parsed.error };
}

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
  if (!isArray(m.content)) return '';
  return m.content
    .map((part) =>
      part && typeof part === 'object' && typeof (part as any).text === 'string' ? (part as any).text : '',
    )
    .filter(Boolean)
    .join('\n');
}

export function hasToolCalls(m: ChatMessage): boolean {
  return m.role === 'assistant' && isArray(m.tool_calls) && m.tool_calls.length > 0;
}
