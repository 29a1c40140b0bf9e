// Helpers of the model activity: prompt assembly and failure classification.
import { ApplicationFailure } from '@temporalio/common';
import type { ThreadMessage } from '../workflows/types';

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are a capable general-purpose agent. Work on the task you are given and answer clearly and accurately.';

/** System prompt + rules + thread; a partial answer from a crashed attempt goes last so the model continues it. */
export function buildMessages(
  input: { system?: string; rules?: string[]; messages: ThreadMessage[] },
  partial: { content: string; thinking: string },
): object[] {
  let system = input.system ?? DEFAULT_SYSTEM_PROMPT;
  if (input.rules?.length) system += `\n\nRules you must follow:\n${input.rules.map((r) => `- ${r}`).join('\n')}`;
  const out: object[] = [{ role: 'system', content: system }, ...input.messages];
  if (partial.content || partial.thinking) {
    out.push({ role: 'assistant', content: partial.content, ...(partial.thinking ? { reasoning_content: partial.thinking } : {}) });
  }
  return out;
}

/**
 * 4xx from the model (other than timeout/conflict/rate limit) will fail the same way
 * again: non-retryable. 429, 5xx and connection errors are retried by Temporal.
 * Messages never carry request headers, so no API key can leak through them.
 */
export function classifyModelError(err: unknown): ApplicationFailure {
  const e = err as { status?: unknown; message?: string; name?: string };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const message = (e?.message ?? String(err)).slice(0, 500);
  if (status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status)) {
    return ApplicationFailure.nonRetryable(`the model rejected the request (HTTP ${status}): ${message}`, 'ModelBadRequest');
  }
  const what = status !== undefined ? `HTTP ${status}` : 'connection error';
  return ApplicationFailure.retryable(`the model is unavailable (${what}): ${message}`, 'ModelUnavailable');
}
