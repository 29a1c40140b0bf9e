// Turns a request plus its directives into the reply the model gives. Pure and
// deterministic: the same conversation always yields the same reply, which is
// what lets a caller resume a half-streamed answer (see continueReply).
import { createHash } from 'node:crypto';
import { ChatMessage, ChatRequest, hasToolCalls, messageText } from './request';
import { Directive, findDirective, intParam, mergeDirectives, parseDirectives, parseHeaderDirectives } from './directives';
import { fillSchema } from './json-schema-fill';
import { excerpt, fillerWords, tokenize } from './text';

export interface ToolCallOut {
  id: string;
  name: string;
  /** JSON text as OpenAI sends it (may be deliberately invalid when a script says so). */
  arguments: string;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length';

export interface Reply {
  reasoning: string;
  /** Null on a tool-call turn, as in OpenAI responses. */
  content: string | null;
  toolCalls: ToolCallOut[];
  finishReason: FinishReason;
  /** Set when the request ended with a partial assistant message. */
  continuation?: 'resumed' | 'prefix-mismatch';
}

export interface Script {
  directives: Directive[];
  /** Last user message with the directives removed. */
  userText: string;
  /** Last user message as sent; the default key of fail/drop/hang counters. */
  rawUserText: string;
}

export const DEFAULT_LONG_WORDS = 200;

export function readScript(req: ChatRequest, header: string | undefined): Script {
  const lastUser = findLast(req.messages, (m) => m.role === 'user');
  const raw = lastUser ? messageText(lastUser) : '';
  const parsed = parseDirectives(raw);
  return { directives: mergeDirectives(parsed.directives, parseHeaderDirectives(header)), userText: parsed.text, rawUserText: raw };
}

function findLast<T>(xs: T[], pred: (x: T) => boolean): T | undefined {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return xs[i];
  return undefined;
}

function findLastIndex<T>(xs: T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return i;
  return -1;
}

/** Tool call ids derive from the conversation so a retried request gets the same ids. */
function toolCallId(convo: ChatMessage[], turn: number, index: number): string {
  const h = createHash('sha256').update(JSON.stringify(convo)).update(`|${turn}|${index}`).digest('hex');
  return `call_${h.slice(0, 24)}`;
}

function normaliseArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

function forcedToolName(req: ChatRequest): string | undefined {
  const choice = req.tool_choice as any;
  if (choice === 'required') return req.tools?.[0]?.function.name;
  if (choice && typeof choice === 'object' && typeof choice.function?.name === 'string') return choice.function.name;
  return undefined;
}

function planToolCalls(req: ChatRequest, convo: ChatMessage[], script: Script, turn: number): ToolCallOut[] {
  const offered = req.tools ?? [];
  if (offered.length === 0 || req.tool_choice === 'none') return [];
  let wanted = script.directives.filter((d) => d.name === 'tool' && intParam(d, 'turn', 1) === turn);
  if (wanted.length === 0 && turn === 1) {
    const forced = forcedToolName(req);
    if (forced) wanted = [{ name: 'tool', params: { name: forced } }];
  }
  return wanted.map((d, index) => {
    const name = d.params.name ?? offered[0].function.name;
    const def = offered.find((t) => t.function.name === name);
    const args =
      d.params.args !== undefined
        ? normaliseArgs(d.params.args)
        : JSON.stringify(fillSchema(def?.function.parameters ?? { type: 'object' }, { text: script.userText }));
    return { id: toolCallId(convo, turn, index), name, arguments: args };
  });
}

function baseText(script: Script): string {
  const ds = script.directives;
  const say = findDirective(ds, 'say');
  if (say) return say.params.text ?? '';
  const long = findDirective(ds, 'long');
  if (long) return fillerWords(intParam(long, 'words', DEFAULT_LONG_WORDS));
  const slow = findDirective(ds, 'slow');
  if (slow?.params.tokens !== undefined) return fillerWords(intParam(slow, 'tokens', 0));
  return script.userText ? `You said: ${script.userText}` : 'You said nothing.';
}

function jsonText(req: ChatRequest, script: Script, text: string): string | undefined {
  const rf = req.response_format;
  if (rf?.type === 'json_schema' && rf.json_schema?.schema !== undefined) {
    return JSON.stringify(fillSchema(rf.json_schema.schema, { text }));
  }
  if (rf?.type === 'json_object' || findDirective(script.directives, 'json')) return JSON.stringify({ reply: text });
  return undefined;
}

function reasoningFor(script: Script, what: string): string {
  const think = findDirective(script.directives, 'think');
  if (!think) return '';
  if (think.params.words !== undefined) return fillerWords(intParam(think, 'words', 0));
  return `The user wrote: "${excerpt(script.userText)}". ${what}`;
}

/** The complete reply for a conversation that does not end in a partial answer. */
function composeReply(req: ChatRequest, convo: ChatMessage[], script: Script): Reply {
  const after = convo.slice(findLastIndex(convo, (m) => m.role === 'user') + 1);
  const turn = after.filter(hasToolCalls).length + 1;
  const calls = planToolCalls(req, convo, script, turn);
  if (calls.length > 0) {
    const names = [...new Set(calls.map((c) => c.name))].join(', ');
    return { reasoning: reasoningFor(script, `I should call ${names} to answer.`), content: null, toolCalls: calls, finishReason: 'tool_calls' };
  }
  const results = after.slice(findLastIndex(after, hasToolCalls) + 1).filter((m) => m.role === 'tool');
  const text = results.length > 0 ? results.map((m) => `tool said: ${messageText(m)}`).join('\n') : baseText(script);
  const what = results.length > 0 ? 'The tool answered; I will pass its result on.' : 'I will reply.';
  return { reasoning: reasoningFor(script, what), content: jsonText(req, script, text) ?? text, toolCalls: [], finishReason: 'stop' };
}

/**
 * A trailing assistant message without tool calls is a prefix of an answer
 * already delivered; the reply is the rest of the same deterministic answer.
 * A prefix made only of reasoning (`reasoning_content`, empty content) resumes
 * inside the reasoning.
 */
function continueReply(full: Reply, partial: ChatMessage): Reply {
  if (full.content === null) return full;
  const prefix = messageText(partial);
  const reasoningPrefix = partial.reasoning_content ?? '';
  if (prefix) {
    if (!full.content.startsWith(prefix)) return { ...full, continuation: 'prefix-mismatch' };
    return { ...full, reasoning: '', content: full.content.slice(prefix.length), continuation: 'resumed' };
  }
  if (reasoningPrefix && full.reasoning.startsWith(reasoningPrefix)) {
    return { ...full, reasoning: full.reasoning.slice(reasoningPrefix.length), continuation: 'resumed' };
  }
  return { ...full, continuation: reasoningPrefix ? 'prefix-mismatch' : 'resumed' };
}

function applyTokenLimit(reply: Reply, limit: number | null | undefined): Reply {
  if (!limit || reply.content === null) return reply;
  const tokens = tokenize(reply.content);
  if (tokens.length <= limit) return reply;
  return { ...reply, content: tokens.slice(0, limit).join(''), finishReason: 'length' };
}

export function buildReply(req: ChatRequest, script: Script): Reply {
  const msgs = req.messages;
  const last = msgs[msgs.length - 1];
  const partial = last.role === 'assistant' && !hasToolCalls(last) ? last : undefined;
  const full = composeReply(req, partial ? msgs.slice(0, -1) : msgs, script);
  const reply = partial ? continueReply(full, partial) : full;
  return applyTokenLimit(reply, req.max_completion_tokens ?? req.max_tokens);
}
