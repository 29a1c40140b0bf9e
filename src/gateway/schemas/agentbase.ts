// Agentbase's own message endpoints (POST /get-messages, POST /clear-messages,
// each with ?session=), as its SDKs call them: the request and answer schemas
// the route checks and the OpenAPI document states, and how a session's
// conversation reads in Agentbase's message types.
import { z } from 'zod';
import type { ThreadMessage } from '../../../workflows/types';
import { SESSION_ID } from './request';

export const agentbaseSessionQuerySchema = z.strictObject({
  session: z.string().regex(SESSION_ID).describe('The session whose conversation to read or clear.'),
});

/** The SDKs send no body; an empty JSON object is as good, and anything in one is a mistake worth a 400. */
export const agentbaseEmptyBodySchema = z.strictObject({});

/** Agentbase's name for each kind of message a session keeps (the user's, the agent's answers). */
const MESSAGE_TYPE = { user: 'user_message', assistant: 'agent_response' } as const;

export const agentbaseMessagesSchema = z
  .array(
    z.object({
      type: z
        .enum(['user_message', 'agent_response'])
        .describe('user_message: what the user sent; agent_response: what the agent answered.'),
      content: z.string(),
    }),
  )
  .describe(
    "The session's conversation, oldest first, in Agentbase's message types: what the session remembers, the user's messages and the agent's answers. A run's thinking and tool calls (Agentbase's agent_thinking, agent_tool_use, agent_tool_response) are not part of it; they are in that task's events (GET /tasks/{id}/result).",
  );

export const agentbaseClearedSchema = z
  .object({ success: z.literal(true), message: z.string() })
  .describe('The conversation was cleared: later runs in the session start from an empty one.');

export function agentbaseMessages(thread: readonly ThreadMessage[]): z.output<typeof agentbaseMessagesSchema> {
  return thread.map((m) => ({ type: MESSAGE_TYPE[m.role], content: m.content }));
}
