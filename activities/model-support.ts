// Helpers of the model activity: prompt assembly, failure classification and
// the size check of what a turn hands the workflow.
import { ApplicationFailure } from '@temporalio/common';
import type { RunMessage, ThreadMessage } from '../workflows/types';
import type { ToolSpec } from '../workflows/tool-registry';
import { isConnectionFailure } from './connection-errors';

export const DEFAULT_SYSTEM_PROMPT =
  'You are a capable general-purpose agent. Work on the task you are given and answer clearly and accurately.';

export interface PromptInput {
  system?: string;
  rules?: string[];
  /** The handoff agent that has the conversation: its instructions join the system prompt. */
  agent?: { name: string; description: string };
  /** The session's thread before this run. */
  session: ThreadMessage[];
  /** The run's own thread: its task, tool calls and results, messages sent in. */
  run: RunMessage[];
}

/** One run message as Chat Completions wants it. */
function chatMessage(m: RunMessage): object {
  if (m.role === 'tool')
    return {
      role: 'tool',
      tool_call_id: m.tool_call_id,
      content: m.is_error && !m.content.startsWith('Error') ? `Error: ${m.content}` : m.content,
    };
  if (m.role === 'assistant' && m.tool_calls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.tool_calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  }
  return { role: m.role, content: m.content };
}

/** System prompt (+ the active handoff agent's instructions) + rules + session thread + run thread. */
export function buildMessages(input: PromptInput): object[] {
  let system = input.system ?? DEFAULT_SYSTEM_PROMPT;
  if (input.agent) system += `\n\n${agentInstructions(input.agent)}`;
  if (input.rules?.length) system += `\n\nRules you must follow:\n${input.rules.map((r) => `- ${r}`).join('\n')}`;
  return [{ role: 'system', content: system }, ...input.session, ...input.run.map(chatMessage)];
}

/** What a handoff agent is told: who it is and that the conversation is now its own. */
export function agentInstructions(agent: { name: string; description: string }): string {
  return `You are the ${agent.name} agent: ${agent.description}. The conversation has been handed to you; continue it in that role, with the whole conversation so far in view.`;
}

/** The tools as Chat Completions function tools. */
export function chatTools(tools: readonly ToolSpec[]): object[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** Errors of the model client that mean the provider could not be reached or did not answer in time. */
const CONNECTION_ERRORS = new Set(['APIConnectionError', 'APIConnectionTimeoutError', 'FetchError']);

/**
 * 4xx from the model (other than timeout/conflict/rate limit) will fail the same way
 * again: non-retryable. 429, 5xx and connection errors are retried by Temporal.
 * Anything else is a fault of ours (a bug, a malformed stream): retried too, so a
 * fixed worker can finish the turn, but reported as what it is.
 * Messages never carry request headers, so no API key can leak through them.
 */
export function classifyModelError(err: unknown): ApplicationFailure {
  const e = err as { status?: unknown; message?: string; name?: string };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const message = (e?.message ?? String(err)).slice(0, 500);
  if (status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status)) {
    return ApplicationFailure.nonRetryable(
      `the model rejected the request (HTTP ${status}): ${message}`,
      'ModelBadRequest',
    );
  }
  if (status !== undefined)
    return ApplicationFailure.retryable(`the model is unavailable (HTTP ${status}): ${message}`, 'model_unavailable');
  if (e?.name === 'ModelStreamStalled')
    return ApplicationFailure.retryable(
      `the model is unavailable (its stream stalled): ${message}`,
      'model_unavailable',
    );
  if (CONNECTION_ERRORS.has(e?.name ?? '') || isConnectionFailure(message)) {
    return ApplicationFailure.retryable(`the model is unavailable (connection error): ${message}`, 'model_unavailable');
  }
  return ApplicationFailure.retryable(`the model call failed (${e?.name ?? 'Error'}): ${message}`, 'ModelCallError');
}

/** Size of a turn's outcome as the workflow receives it: its JSON, UTF-8 (the codec adds a few dozen bytes). */
export function outcomeBytes(outcome: object): number {
  return Buffer.byteLength(JSON.stringify(outcome), 'utf8');
}

/**
 * A turn too large to hand the workflow. Temporal refuses a payload over its
 * 2 MiB blob limit, so an activity result past it fails the activity on every
 * attempt; this fails it once, with a type the run's agent_error keeps. It names
 * the size and the limit, never the content. Not retried: the same
 * conversation asks for the same answer.
 */
export function answerTooLarge(bytes: number, limit: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'answer_too_large',
    message: `the model's turn (answer, reasoning and tool-call arguments) is ${bytes} bytes, over the limit of ${limit} bytes (MODEL_ANSWER_MAX_BYTES)`,
    nonRetryable: true,
    details: [{ bytes, limit }],
  });
}
