// Writes a Reply as an OpenAI chat completion: one JSON body, or SSE chunks in
// the order OpenAI sends them (role, reasoning, content or tool-call deltas,
// finish, optional usage, [DONE]).
import { once } from 'node:events';
import type { Response } from 'express';
import type { ChatRequest } from './request';
import { messageText } from './request';
import type { Reply } from './script';
import { countTokens, tokenize } from './text';

export interface Pacing {
  /** Wait before the first chunk, in ms. */
  firstMs: number;
  /** Wait before every token chunk, in ms. */
  delayMs: number;
}

/** How a scripted interruption cuts the response short. */
export interface Interruption {
  kind: 'drop' | 'hang';
  /**
   * Token chunks streamed before the interruption. Undefined means before the
   * response starts at all, which is also what a non-streaming request gets.
   */
  after?: number;
}

export interface ResponseContext {
  id: string;
  created: number;
  model: string;
  pacing: Pacing;
  /** Aborted when the client goes away; every wait gives up at once. */
  signal: AbortSignal;
  interruption?: Interruption;
  /** See ScriptedModelOptions.onTokenWritten. */
  onTokenWritten?: (delta: Record<string, unknown>) => void;
}

export type Outcome = 'completed' | 'client-aborted' | 'dropped' | 'hung';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

const FINGERPRINT = 'fp_scripted';
const DROP_GRACE_MS = 25;

export function usageFor(req: ChatRequest, reply: Reply): Usage {
  // A few tokens of framing per message, as real tokenizers charge for roles.
  let prompt = 0;
  for (const m of req.messages) {
    prompt += 3 + countTokens(messageText(m));
    for (const c of m.tool_calls ?? [])
      prompt += countTokens(c.function.name) + countTokens(c.function.arguments ?? '');
  }
  if (req.tools?.length) prompt += Math.ceil(JSON.stringify(req.tools).length / 4);
  const reasoning = countTokens(reply.reasoning);
  let completion = reasoning + countTokens(reply.content ?? '');
  for (const c of reply.toolCalls) completion += 1 + countTokens(c.arguments);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves once the client disconnects: the only way a hung request ends. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

async function interrupt(res: Response, ctx: ResponseContext, kind: Interruption['kind']): Promise<Outcome> {
  if (kind === 'drop') {
    const socket = res.socket;
    if (socket && res.headersSent) {
      // Let the tokens already written reach the client and be read before the
      // cut: a fetch body errored in the same read as its last bytes discards
      // them, and a scripted drop after N tokens must deliver those N tokens.
      // 'drain' only fires after a refused write, so poll the buffer instead.
      for (let i = 0; i < 100 && socket.writableLength > 0; i++) await sleep(5, ctx.signal);
      await sleep(DROP_GRACE_MS, ctx.signal);
    }
    socket?.destroy();
    return 'dropped';
  }
  await untilAborted(ctx.signal);
  return 'hung';
}

function assistantMessage(reply: Reply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.content, refusal: null };
  if (reply.reasoning) message.reasoning_content = reply.reasoning;
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return message;
}

export async function sendCompletion(
  res: Response,
  req: ChatRequest,
  reply: Reply,
  ctx: ResponseContext,
): Promise<Outcome> {
  if (ctx.interruption) return interrupt(res, ctx, ctx.interruption.kind);
  const pieces =
    tokenize(reply.reasoning).length +
    tokenize(reply.content ?? '').length +
    reply.toolCalls.reduce((n, c) => n + 1 + tokenize(c.arguments).length, 0);
  if (!(await sleep(ctx.pacing.firstMs + ctx.pacing.delayMs * pieces, ctx.signal))) return 'client-aborted';
  res.json({
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, message: assistantMessage(reply), logprobs: null, finish_reason: reply.finishReason }],
    usage: usageFor(req, reply),
    service_tier: 'default',
  });
  return 'completed';
}

/** Delta objects after the role chunk, each one token's worth. */
function tokenDeltas(reply: Reply): Record<string, unknown>[] {
  const deltas: Record<string, unknown>[] = [];
  for (const t of tokenize(reply.reasoning)) deltas.push({ reasoning_content: t });
  for (const t of tokenize(reply.content ?? '')) deltas.push({ content: t });
  reply.toolCalls.forEach((c, index) => {
    deltas.push({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
    for (const t of tokenize(c.arguments)) deltas.push({ tool_calls: [{ index, function: { arguments: t } }] });
  });
  return deltas;
}

/** The last chunk before [DONE] when the request asked for stream_options.include_usage: no choices, the usage. */
function usageChunk(req: ChatRequest, reply: Reply, ctx: ResponseContext) {
  return {
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: FINGERPRINT,
    choices: [],
    usage: usageFor(req, reply),
  };
}

export async function streamCompletion(
  res: Response,
  req: ChatRequest,
  reply: Reply,
  ctx: ResponseContext,
): Promise<Outcome> {
  if (ctx.interruption && ctx.interruption.after === undefined) return interrupt(res, ctx, ctx.interruption.kind);
  const includeUsage = req.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const write = async (data: unknown): Promise<boolean> => {
    if (ctx.signal.aborted) return false;
    const ok = res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    if (!ok) {
      try {
        await once(res, 'drain', { signal: ctx.signal });
      } catch {
        return false;
      }
    }
    return true;
  };

  res
    .status(200)
    .set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  if (!(await sleep(ctx.pacing.firstMs, ctx.signal))) return 'client-aborted';
  if (
    !(await write(chunk({ role: 'assistant', content: reply.content === null || reply.reasoning ? null : '' }, null)))
  )
    return 'client-aborted';

  const deltas = tokenDeltas(reply);
  for (let i = 0; i < deltas.length; i++) {
    if (ctx.interruption && i === ctx.interruption.after) return interrupt(res, ctx, ctx.interruption.kind);
    if (!(await sleep(ctx.pacing.delayMs, ctx.signal))) return 'client-aborted';
    // write() hands the chunk to the socket before its first await, so the hook
    // fires right after emission and before any wait for 'drain'.
    const written = write(chunk(deltas[i], null));
    ctx.onTokenWritten?.(deltas[i]);
    if (!(await written)) return 'client-aborted';
  }
  if (ctx.interruption) return interrupt(res, ctx, ctx.interruption.kind);
  if (!(await write(chunk({}, reply.finishReason)))) return 'client-aborted';
  if (includeUsage && !(await write(usageChunk(req, reply, ctx)))) return 'client-aborted';
  if (!(await write('[DONE]'))) return 'client-aborted';
  res.end();
  return 'completed';
}
