// The sessions' answer bodies (GET /sessions, its messages, POST /sessions and a fork), each
// pinned to the type the code returns, as response.ts does for the tasks'.
import { z } from 'zod';
import type { ThreadMessage } from '../../../workflows/types';
import type { SessionPage } from '../services/session-list';
import type { SessionCreated } from '../services/session-service';
import { same } from './same-type';

export const sessionMessagesSchema = z.object({
  session: z.string(),
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() }))
    .describe('The conversation so far, oldest first.'),
});
same<z.output<typeof sessionMessagesSchema>, { session: string; messages: ThreadMessage[] }>(true);

export const sessionListSchema = z
  .object({
    sessions: z.array(
      z.object({
        session: z.string().describe('The session id; send it as ?session= to continue the conversation.'),
        created_at: z.string().describe('When the session was created, ISO 8601.'),
        open: z
          .boolean()
          .describe(
            'Its workflow is running. A session closes when idle (SESSION_IDLE_CLOSE_MS) and reopens on its next run; closed ones are listed too.',
          ),
      }),
    ),
    next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page.'),
  })
  .describe("The account's sessions, each once, most recently (re)opened first.");
same<z.output<typeof sessionListSchema>, SessionPage>(true);

export const sessionCreatedSchema = z
  .object({ session: z.string(), created_at: z.string().describe('ISO 8601.') })
  .describe('The new, empty session: POST /?session=<session> runs in it.');
same<z.output<typeof sessionCreatedSchema>, SessionCreated>(true);

export const sessionForkedSchema = z
  .object({
    session: z.string().describe('The new session.'),
    created_at: z.string().describe('ISO 8601.'),
    forked_from: z.string().describe('The session it was forked from, which goes on unchanged.'),
    messages: z.number().int().min(0).describe('How many messages its thread starts with.'),
  })
  .describe(
    "A new session whose thread is the first `messages` of the other's: POST /?session=<session> continues from there. Its workspace starts empty.",
  );
