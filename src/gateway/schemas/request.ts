// Request schemas of the HTTP API besides the run request (src/common/contracts/run-request.ts):
// ids, query strings and the task endpoints' bodies. The OpenAPI document is generated from
// these schemas (openapi.ts).
import { z } from 'zod';
import { CURSOR } from '../services/list-cursor';
import { TASK_STATUSES } from '../../../workflows/types';
import { nonEmpty, text } from '../../common/contracts/run-request';

/** Ids and headers the routes check; the OpenAPI document states the same patterns. */
export const TASK_ID = /^task_[A-Za-z0-9]{1,64}$/;
export const SESSION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** An event's seq as its `id:` line gave it ([0-9], not \d: a JSON Schema read by Python's re takes \d for any Unicode digit). */
export const LAST_EVENT_ID = /^[0-9]{1,15}$/;

export const runQuerySchema = z.strictObject({ session: z.string().regex(SESSION_ID).optional() });

const cursor = z
  .string()
  .regex(CURSOR, 'a cursor as next_cursor gave it (2-4096 characters of A-Z a-z 0-9 _ -)')
  .optional()
  .describe(
    "The previous page's next_cursor, as it was given (opaque). One of this shape that the service did not hand out for this listing is a 422.",
  );
const limit = z.coerce.number().int().min(1).max(100).default(20);

export const listQuerySchema = z.strictObject({
  status: z.enum(TASK_STATUSES).optional(),
  session: z.string().min(1).max(128).optional(),
  schedule: z
    .string()
    .regex(/^sched_[A-Za-z0-9]{1,64}$/)
    .optional()
    .describe('Only the tasks this schedule started.'),
  limit,
  cursor,
});

export const SCHEDULE_ID = /^sched_[A-Za-z0-9]{1,64}$/;

export const scheduleListQuerySchema = z.strictObject({ limit, cursor });

export const schedulePauseSchema = z.strictObject({
  note: z.string().max(1000).optional().describe('Why it is paused (shown in GET /schedules/{id} and the Web UI).'),
});

export const sessionListQuerySchema = z.strictObject({ limit, cursor });

export const createSessionSchema = z.strictObject({
  session: z
    .string()
    .regex(SESSION_ID)
    .optional()
    .describe('The id to give the session (letters, digits and _ . : -, at most 128); default: a new sess_… id.'),
});

export const forkSessionSchema = z.strictObject({
  at: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "How many of the session's messages the fork keeps, from the first (GET /sessions/{id}/messages lists them in order): 2 keeps the first exchange of a plain conversation; default all of them.",
    ),
  session: z
    .string()
    .regex(SESSION_ID)
    .optional()
    .describe('The id to give the new session (letters, digits and _ . : -, at most 128); default: a new sess_… id.'),
});

export const resultQuerySchema = z.strictObject({ wait: z.coerce.number().min(0).max(60).default(0) });

export const eventsQuerySchema = z.strictObject({ after: z.coerce.number().int().min(0).optional() });

export const taskMessageSchema = z.strictObject({
  message: nonEmpty.describe('A message for the running agent; it reads it before its next model turn.'),
});

/** A gated call's id as the model gave it (the path's {tool_call_id}). */
export const TOOL_CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export const approvalDecisionSchema = z
  .strictObject({
    decision: z
      .enum(['approve', 'deny'])
      .describe('approve: the call runs; deny: it does not, and the model is told so.'),
    input: z
      .unknown()
      .optional()
      .describe(
        "With approve: the arguments the call runs with instead of the model's. They must fit the tool's parameters schema: a 400 names each problem under body.input.",
      ),
    reason: text(2000).optional().describe("Why: with deny, the model reads it in the call's result."),
  })
  .meta({ description: "A person's decision on a tool call that waits for one." });

export const rewindSchema = z
  .strictObject({
    step: z
      .number()
      .int()
      .min(1)
      .describe("The model turn to go back to (agent_step's step): the task runs again from just before it."),
    message: text(32_000)
      .optional()
      .describe(
        'A message for the model before that turn: added to the thread, or with replace the last user message before it.',
      ),
    replace: z
      .boolean()
      .optional()
      .describe("With message: it replaces the last user message before the turn (for turn 1: the request's message)."),
  })
  .meta({
    description:
      'Where a rewind goes back to, and what the model reads there. replace without message is a 422 (body.replace).',
  });

export const patchTaskSchema = z.strictObject({ metadata: z.record(z.string(), z.unknown()) });
