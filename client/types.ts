// The client's types, all derived from the zod schemas the OpenAPI document is
// generated from (requests: src/gateway/schemas.ts, responses:
// src/gateway/response-schemas.ts) and from the one event union
// (src/relay/events.ts). Type-only imports: nothing of the gateway is loaded at
// run time, so the client stays a thin layer over fetch.
import type { z } from 'zod';
import type { createSessionSchema, listQuerySchema, patchTaskSchema, runRequestSchema, sessionListQuerySchema } from '../src/gateway/schemas';
import type {
  cancelAcceptedSchema,
  deliveryListSchema,
  errorBodySchema,
  sessionCreatedSchema,
  sessionListSchema,
  sessionMessagesSchema,
  taskAcceptedSchema,
  taskListSchema,
  taskMessageAcceptedSchema,
  taskResultSchema,
  taskViewSchema,
  webhookSecretSchema,
} from '../src/gateway/response-schemas';
import type { AgentEvent, EventType } from '../src/relay/events';

export type { AgentEvent, EventType };

/** The run request as a client sends it (fields with server defaults are optional). */
export type RunRequest = z.input<typeof runRequestSchema>;
/** `run()` and `stream()` answer in the foreground: `background` is runBackground's business. */
export type ForegroundRunRequest = Omit<RunRequest, 'background'>;
export type BackgroundRunRequest = Omit<RunRequest, 'background'>;

export type TaskStatus = TaskView['status'];
export type TaskView = z.output<typeof taskViewSchema>;
export type TaskResult = z.output<typeof taskResultSchema>;
export type TaskAccepted = z.output<typeof taskAcceptedSchema>;
export type CancelAccepted = z.output<typeof cancelAcceptedSchema>;
export type TaskMessageAccepted = z.output<typeof taskMessageAcceptedSchema>;
export type TaskList = z.output<typeof taskListSchema>;
export type TaskListItem = TaskList['tasks'][number];
export type SessionMessages = z.output<typeof sessionMessagesSchema>;
export type ErrorBody = z.output<typeof errorBodySchema>;
export type DeliveryList = z.output<typeof deliveryListSchema>;
export type WebhookSecret = z.output<typeof webhookSecretSchema>;

/** GET /tasks query (`limit` 1..100, the server's default 20; the schema coerces it from text, so its input type is unknown). */
export type ListTasksQuery = Omit<z.input<typeof listQuerySchema>, 'limit'> & { limit?: number };
export type UpdateTaskBody = z.input<typeof patchTaskSchema>;

export type SessionList = z.output<typeof sessionListSchema>;
/** One entry of GET /sessions. */
export type SessionInfo = SessionList['sessions'][number];
/** POST /sessions → 201. */
export type SessionCreated = z.output<typeof sessionCreatedSchema>;
/** POST /sessions body: an id of one's own choosing, or none for a new sess_… id. */
export type CreateSessionBody = z.input<typeof createSessionSchema>;
/** GET /sessions query (`limit` 1..100, default 20; coerced from text by the schema, as for tasks). */
export type ListSessionsQuery = Omit<z.input<typeof sessionListQuerySchema>, 'limit'> & { limit?: number };
