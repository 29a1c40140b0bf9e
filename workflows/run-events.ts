// The events a run's steps produce, built in one place for the workflow (the
// result's events) and the activities (what they publish), so the two always
// agree. Pure functions: bundled into the workflow sandbox.
import type { BlockEvent, RunMessage, ToolCall, Usage } from './types';

/** Tool inputs and outputs in the result's events are cut to this many characters (the stream has them whole). */
export const RESULT_TOOL_TEXT_CHARS = 2000;

/** The complete blocks of a model turn's text: thinking (flash mode only), then the response. */
export function textBlocks(content: string, thinking: string, showThinking: boolean): BlockEvent[] {
  const out: BlockEvent[] = [];
  if (showThinking && thinking)
    out.push({ type: 'agent_thinking_start' }, { type: 'agent_thinking', content: thinking });
  if (content) out.push({ type: 'agent_response_start' }, { type: 'agent_response', content });
  return out;
}

function parsedInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** agent_tool_use_start and agent_tool_use of each call, in the order the model made them. */
export function toolUseEvents(calls: readonly ToolCall[]): BlockEvent[] {
  return calls.flatMap((c) => [
    { type: 'agent_tool_use_start', tool_call_id: c.id } as const,
    {
      type: 'agent_tool_use',
      tool_call_id: c.id,
      content: JSON.stringify({ tool: c.name, input: parsedInput(c.arguments) }),
    } as const,
  ]);
}

export function toolResponseEvent(call: ToolCall, content: string, isError: boolean): BlockEvent {
  return {
    type: 'agent_tool_response',
    tool_call_id: call.id,
    content: JSON.stringify({ tool: call.name, content }),
    ...(isError && { is_error: true }),
  };
}

export function stepEvent(step: number, usage: Usage): BlockEvent {
  return {
    type: 'agent_step',
    step: String(step),
    usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens },
  };
}

/** An event as kept in the result: tool texts cut, so a run of hundreds of calls keeps a bounded result. */
export function forResult(ev: BlockEvent): BlockEvent {
  if (
    (ev.type === 'agent_tool_use' || ev.type === 'agent_tool_response') &&
    ev.content.length > RESULT_TOOL_TEXT_CHARS
  ) {
    return { ...ev, content: ev.content.slice(0, RESULT_TOOL_TEXT_CHARS) + '…' };
  }
  return ev;
}

/** A tool's output as the model and history get it: cut at `max` characters, with a note saying so. */
export function capToolOutput(content: string, max: number): string {
  if (content.length <= max) return content;
  return `${content.slice(0, max)}\n[cut: the tool returned ${content.length} characters; only the first ${max} are shown]`;
}

/** Characters of a run's thread kept across its continuations; older tool results give way first. */
export const THREAD_BUDGET_CHARS = 1_000_000;

const size = (m: RunMessage) =>
  m.content.length + (m.role === 'assistant' ? (m.tool_calls ?? []).reduce((n, c) => n + c.arguments.length, 0) : 0);

/**
 * Keeps the thread within the budget: the oldest tool results (then the oldest
 * assistant texts) are replaced by a short note. The first message (the task)
 * and the latest ones stay whole.
 */
export function compactThread(thread: RunMessage[], budget = THREAD_BUDGET_CHARS): RunMessage[] {
  let total = thread.reduce((n, m) => n + size(m), 0);
  if (total <= budget) return thread;
  const out = [...thread];
  for (const role of ['tool', 'assistant'] as const) {
    for (let i = 1; i < out.length - 2 && total > budget; i++) {
      const m = out[i];
      if (m.role !== role || m.content.length <= 200) continue;
      const note = `[elided: ${m.content.length} characters, to keep the run's state bounded]`;
      total -= m.content.length - note.length;
      out[i] = { ...m, content: note };
    }
  }
  return out;
}

/** A page of the thread query stays well under gRPC's 4 MB message limit. */
const THREAD_PAGE_CHARS = 1_000_000;

/** The run's thread from message `from` on, one query page (the model activity reads it instead of carrying it). */
export function threadPage(thread: RunMessage[], from: number): { messages: RunMessage[]; total: number } {
  const messages: RunMessage[] = [];
  let chars = 0;
  for (let i = Math.max(0, from); i < thread.length; i++) {
    chars += JSON.stringify(thread[i]).length;
    if (messages.length && chars > THREAD_PAGE_CHARS) break;
    messages.push(thread[i]);
  }
  return { messages, total: thread.length };
}

/**
 * A result as the workflow stores it: the answer's block (the last agent_response, the same text
 * as `output`) says `content_ref: "output"` with no text of its own, so the answer is in the run's
 * history once more, not twice. Every reader expands it back (answerExpanded) before anyone sees it.
 */
export function answerByReference<R extends { output: string | null; events: BlockEvent[] }>(r: R): R {
  const i = lastAnswer(r.events, r.output);
  if (i < 0) return r;
  const events = [...r.events];
  events[i] = { type: 'agent_response', content: '', content_ref: 'output' } as BlockEvent;
  return { ...r, events };
}

/** A stored result with its answer's block whole again (the API's form). */
export function answerExpanded<R extends { output: string | null; events: BlockEvent[] }>(r: R): R {
  const i = r.events.findIndex((e) => (e as { content_ref?: string }).content_ref === 'output');
  if (i < 0 || r.output === null) return r;
  const events = [...r.events];
  events[i] = { type: 'agent_response', content: r.output };
  return { ...r, events };
}

function lastAnswer(events: BlockEvent[], output: string | null): number {
  if (!output) return -1;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'agent_response') return e.content === output ? i : -1;
  }
  return -1;
}
