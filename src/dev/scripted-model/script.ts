// Turns a request plus its directives into the reply the model gives. Pure and
// deterministic: the same conversation always yields the same reply, which is
// what lets a caller resume a half-streamed answer (see continueReply).
import { createHash, Hash } from 'node:crypto';
import { ChatMessage, ChatRequest, hasToolCalls, messageText, ToolDef } from './request';
import {
  Directive,
  findDirective,
  intParam,
  mergeDirectives,
  parseDirectives,
  parseHeaderDirectives,
} from './directives';
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
  /** `[[json times=N]]` still had a use left for this request (the server counts): the structured reply does not fit. */
  invalidNow?: boolean;
}

export const DEFAULT_LONG_WORDS = 200;

export function readScript(req: ChatRequest, header: string | undefined): Script {
  const lastUser = findLast(req.messages, (m) => m.role === 'user');
  const raw = lastUser ? messageText(lastUser) : '';
  const parsed = parseDirectives(raw);
  return {
    directives: mergeDirectives(parsed.directives, parseHeaderDirectives(header)),
    userText: parsed.text,
    rawUserText: raw,
  };
}

function findLast<T>(xs: T[], pred: (x: T) => boolean): T | undefined {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return xs[i];
  return undefined;
}

function findLastIndex<T>(xs: T[], pred: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pred(xs[i])) return i;
  return -1;
}

/** Most calls one `[[tool count=N]]` makes in a round, so a typo cannot exhaust memory. */
const MAX_TOOL_COUNT = 1000;

// A module constant: under jest the code runs in a vm context, where global lookups are slow.
const stringify = JSON.stringify;

/**
 * What the tool call ids are derived from: every message's role, text, name and
 * tool-call fields, joined with control characters. Cheaper than JSON of the
 * whole conversation, which matters once it holds hundreds of tool rounds.
 */
function conversationKey(convo: ChatMessage[]): string {
  const parts: string[] = [];
  for (const m of convo) {
    const content = typeof m.content === 'string' ? m.content : m.content == null ? '' : stringify(m.content);
    parts.push('\u0001', m.role, content, m.name ?? '', m.tool_call_id ?? '');
    for (const c of m.tool_calls ?? []) parts.push('\u0002', c.id ?? '', c.function.name, c.function.arguments ?? '');
  }
  return parts.join('\u0000');
}

/**
 * Tool call ids derive from the conversation so a retried request gets the same
 * ids. The conversation is hashed once per request; each id then only adds its
 * round and index on top.
 */
function toolCallIds(convo: ChatMessage[]): (round: number, index: number) => string {
  let base: Hash | undefined;
  return (round, index) => {
    base ??= createHash('sha256').update(conversationKey(convo));
    return `call_${base.copy().update(`|${round}|${index}`).digest('hex').slice(0, 24)}`;
  };
}

/** The http(s) URLs the previous round's tool results mention, in order (for `{{url}}`). */
function earlierUrls(convo: ChatMessage[]): string[] {
  const results: string[] = [];
  for (let i = convo.length - 1; i >= 0 && convo[i].role === 'tool'; i--) results.unshift(messageText(convo[i]));
  return results.flatMap((t) => t.match(/https?:\/\/[^\s)\]>"'`]+/g) ?? []);
}

/**
 * The directive's `args`, JSON normalised, with `{{round}}`, `{{call}}` and `{{url}}` /
 * `{{url:N}}` (the first / Nth URL of the previous round's results) in string values
 * replaced; text that is not JSON is kept verbatim (placeholders replaced too), to exercise
 * bad-argument handling.
 */
function scriptedArgs(raw: string, round: number, call: number, urls: readonly string[] = []): string {
  const fill = (s: string) =>
    s
      .replaceAll('{{round}}', String(round))
      .replaceAll('{{call}}', String(call))
      .replace(/\{\{url(?::(\d+))?\}\}/g, (_m, n?: string) => urls[Number(n ?? 1) - 1] ?? 'no-url-in-the-last-results');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return fill(raw);
  }
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? fill(v) : v));
}

function forcedToolName(req: ChatRequest): string | undefined {
  const choice = req.tool_choice as any;
  if (choice === 'required') return req.tools?.[0]?.function.name;
  if (choice && typeof choice === 'object' && typeof choice.function?.name === 'string') return choice.function.name;
  return undefined;
}

/**
 * The offered tool a directive's `name` means: the exact name, else a namespaced
 * one ending in `__<name>` (an MCP server's tool), else any name ending in
 * `<name>`; the first in offered order at each step.
 */
function resolveTool(offered: ToolDef[], name: string): ToolDef | undefined {
  return (
    offered.find((t) => t.function.name === name) ??
    offered.find((t) => t.function.name.endsWith(`__${name}`)) ??
    offered.find((t) => t.function.name.endsWith(name))
  );
}

/** Tool directives that take part in the given tool round (1-based): rounds turn..turn+rounds-1. */
function activeIn(d: Directive, round: number): boolean {
  const first = intParam(d, 'turn', 1);
  return round >= first && round < first + intParam(d, 'rounds', 1) && intParam(d, 'count', 1) > 0;
}

function toolsUsable(req: ChatRequest): boolean {
  return (req.tools?.length ?? 0) > 0 && req.tool_choice !== 'none';
}

function planToolCalls(req: ChatRequest, convo: ChatMessage[], script: Script, round: number): ToolCallOut[] {
  if (!toolsUsable(req)) return [];
  const offered = req.tools!;
  let wanted = script.directives.filter((d) => d.name === 'tool' && activeIn(d, round));
  if (wanted.length === 0 && round === 1) {
    const forced = forcedToolName(req);
    if (forced) wanted = [{ name: 'tool', params: { name: forced, unknown: 'call' } }];
  }
  const idFor = toolCallIds(convo);
  const urls = earlierUrls(convo);
  const calls: ToolCallOut[] = [];
  for (const d of wanted) {
    const requested = d.params.name || undefined;
    const def = requested === undefined ? offered[0] : resolveTool(offered, requested);
    // An unknown name calls nothing (composeReply says so), unless unknown=call asks for the bad call.
    if (!def && d.params.unknown !== 'call') continue;
    const name = def?.function.name ?? requested!;
    const generated =
      d.params.args === undefined
        ? JSON.stringify(fillSchema(def?.function.parameters ?? { type: 'object' }, { text: script.userText }))
        : undefined;
    const count = Math.min(intParam(d, 'count', 1), MAX_TOOL_COUNT);
    for (let k = 1; k <= count; k++) {
      calls.push({
        id: idFor(round, calls.length),
        name,
        arguments: generated ?? scriptedArgs(d.params.args!, round, k, urls),
      });
    }
  }
  return calls;
}

/**
 * Names of tools the directives so far (rounds 1..round) asked for that the request does not
 * offer and that no earlier round called (a tool may leave the offer once called: a transfer
 * to another agent does).
 */
function missingTools(req: ChatRequest, script: Script, round: number, called: readonly string[]): string[] {
  if (!toolsUsable(req)) return [];
  const missing = new Set<string>();
  const wasCalled = (name: string) => called.some((c) => c === name || c.endsWith(`__${name}`) || c.endsWith(name));
  for (const d of script.directives) {
    if (d.name !== 'tool' || !d.params.name || d.params.unknown === 'call') continue;
    if (intParam(d, 'turn', 1) > round || intParam(d, 'rounds', 1) === 0 || intParam(d, 'count', 1) === 0) continue;
    if (!resolveTool(req.tools!, d.params.name) && !wasCalled(d.params.name)) missing.add(d.params.name);
  }
  return [...missing];
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
    if (deliberatelyInvalid(req, script))
      return JSON.stringify(notFitting(rf.json_schema.schema as Record<string, unknown>));
    return JSON.stringify(fillSchema(rf.json_schema.schema, { text }));
  }
  if (rf?.type === 'json_object' || findDirective(script.directives, 'json')) return JSON.stringify({ reply: text });
  return undefined;
}

/**
 * `[[json invalid=N]]`: the first N structured answers do not fit the schema. They are
 * counted by the system messages after the last user message: a caller's instruction
 * to answer (1), then one per repair request (2, 3, ...).
 */
function deliberatelyInvalid(req: ChatRequest, script: Script): boolean {
  if (script.invalidNow) return true;
  const json = findDirective(script.directives, 'json');
  if (json?.params.invalid === undefined) return false;
  const after = req.messages.slice(findLastIndex(req.messages, (m) => m.role === 'user') + 1);
  const asked = Math.max(1, after.filter((m) => m.role === 'system').length);
  return asked <= intParam(json, 'invalid', 0);
}

/** A value the schema refuses: an object without its required properties, or a value of another type. */
function notFitting(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.required) && schema.required.length) return { not_in_the_schema: true };
  return schema.type === 'array' ? 'not an array' : ['not', 'the', 'expected', 'type'];
}

function reasoningFor(script: Script, what: string): string {
  const think = findDirective(script.directives, 'think');
  if (!think) return '';
  if (think.params.words !== undefined) return fillerWords(intParam(think, 'words', 0));
  return `The user wrote: "${excerpt(script.userText)}". ${what}`;
}

/** How the final answer reports tool results: `answer=last` (default), `answer=all`, or fixed text. */
function answerMode(script: Script): string {
  const d = script.directives.find((x) => x.name === 'tool' && x.params.answer !== undefined);
  return d?.params.answer ?? 'last';
}

/** The complete reply for a conversation that does not end in a partial answer. */
function composeReply(req: ChatRequest, convo: ChatMessage[], script: Script): Reply {
  const after = convo.slice(findLastIndex(convo, (m) => m.role === 'user') + 1);
  let done = 0;
  for (const m of after) if (hasToolCalls(m)) done++;
  const round = done + 1;
  const calls = planToolCalls(req, convo, script, round);
  if (calls.length > 0) {
    const names = [...new Set(calls.map((c) => c.name))].join(', ');
    return {
      reasoning: reasoningFor(script, `I should call ${names} to answer.`),
      content: null,
      toolCalls: calls,
      finishReason: 'tool_calls',
    };
  }
  const mode = answerMode(script);
  const reported = mode === 'all' ? after : after.slice(findLastIndex(after, hasToolCalls) + 1);
  const results = reported.filter((m) => m.role === 'tool');
  const called = after.flatMap((m) => (hasToolCalls(m) ? (m.tool_calls ?? []).map((c) => c.function.name) : []));
  const notes = missingTools(req, script, round, called).map((n) => `no tool named ${n} is offered`);
  let body: string;
  if (results.length > 0)
    body = mode === 'all' || mode === 'last' ? results.map((m) => `tool said: ${messageText(m)}`).join('\n') : mode;
  else body = notes.length > 0 ? '' : baseText(script);
  const text = notes.length > 0 ? [...notes, ...(body ? [body] : [])].join('\n') : body;
  const what =
    results.length > 0
      ? 'The tool answered; I will pass its result on.'
      : notes.length > 0
        ? 'That tool is not offered; I will say so.'
        : 'I will reply.';
  return {
    reasoning: reasoningFor(script, what),
    content: jsonText(req, script, text) ?? text,
    toolCalls: [],
    finishReason: 'stop',
  };
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
  if (!limit || reply.content === null || reply.toolCalls.length > 0) return reply;
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
