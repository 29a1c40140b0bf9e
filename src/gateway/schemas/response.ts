// Response bodies of the HTTP API as zod schemas, only so that the OpenAPI
// document (openapi.ts) is generated from the same kind of source as the
// request schemas. Nothing parses responses with them at runtime; instead each
// schema is pinned to the TypeScript type the code really returns by a
// compile-time check (`same<...>(true)`), so a field added to or changed in
// TaskView, TaskResult, ListPage or the event union fails `tsc` until the
// schema follows. The schedules' bodies are in schedule-response-schemas.ts.
import { z } from 'zod';
import { type BlockEvent, type ScheduledSummary, type TaskStatus } from '../../../workflows/types';
import type { AgentEvent, EventType } from '../../common/relay/events';
import type { ListPage } from '../services/task-list';
import type { ResultBody, TaskService } from '../services/task-service';
import type { publicView } from '../services/task-views';
import { pendingApprovalSchema, taskStatusSchema, workflowViewSchema } from './task-status';
export { approvalDecisionSchema, approvalsPageSchema, rewindAnswerSchema } from './task-status';
import { same, type Norm } from './same-type';

const errorInfoSchema = z.object({
  type: z.string().describe('Machine-readable kind, e.g. agent_error, timeout, cancelled, terminated.'),
  message: z.string(),
});

/** One complete-block event of the run as kept in the result (an event without seq/session/task_id). */
const blockEventSchema: z.ZodType<BlockEvent> = z.lazy(() => z.discriminatedUnion('type', eventSchemas({}))) as never;

export const taskViewSchema = z
  .object({
    task_id: z.string(),
    session: z.string(),
    status: taskStatusSchema,
    progress: z.number().min(0).max(1).describe('Fraction done, 0..1.'),
    current_step: z.string().nullable(),
    error: errorInfoSchema.nullable().describe('Set when the task failed or was cancelled.'),
    metadata: z
      .record(z.string(), z.unknown())
      .describe('User metadata (run request `metadata`, merged with PATCH updates).'),
    created_at: z.string().describe('ISO 8601.'),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    approvals: z
      .array(pendingApprovalSchema)
      .optional()
      .describe(
        'The calls waiting for a decision (status input_required); present once a call of the task has waited.',
      ),
    workflows: z
      .array(workflowViewSchema)
      .optional()
      .describe("Only for a request with workflows: each workflow's steps, their dependencies and status."),
    attempt: z
      .number()
      .int()
      .min(2)
      .nullable()
      .describe(
        'While a model or tool call of the running task is being retried: the attempt under way (2 = the first retry). Null otherwise (and in list items, cancel and patch answers).',
      ),
    last_error: errorInfoSchema
      .nullable()
      .describe('While a call is being retried: why its previous attempt failed. Null otherwise.'),
  })
  .describe('A task as clients see it.');
same<z.output<typeof taskViewSchema>, ReturnType<typeof publicView>>(true);
same<z.output<typeof taskStatusSchema>, TaskStatus>(true);

export const cancelAcceptedSchema = taskViewSchema
  .extend({ cancel_requested: z.literal(true) })
  .describe('The task as it was when cancellation was requested; it becomes cancelled shortly after.');
same<z.output<typeof cancelAcceptedSchema>, ReturnType<typeof publicView> & { cancel_requested: true }>(true);

const completedResultSchema = z.object({
  task_id: z.string(),
  session: z.string(),
  status: z.literal('completed'),
  output: z.string().describe("The agent's final response text."),
  events: z.array(blockEventSchema),
  cost: z.string().describe('Cost of the run, a decimal number as text.'),
  final_output: z
    .object({ name: z.string(), output: z.unknown().describe('The output, parsed: it fits the schema.') })
    .optional()
    .describe('Only when the request had final_output: the structured output, validated against its schema.'),
});

const unsuccessfulResultSchema = z.object({
  task_id: z.string(),
  session: z.string(),
  status: z.enum(['failed', 'cancelled']),
  error: errorInfoSchema.nullable(),
  output: z
    .string()
    .nullable()
    .describe('What a run stopped by max_steps or max_cost had answered last; null otherwise.'),
  events: z.array(blockEventSchema).describe('The events of a run stopped by a cap; empty otherwise.'),
  cost: z.string().nullable().describe('The cost of a run stopped by a cap; null otherwise.'),
});

/** A schedule a run request made, as its answer and its agent_scheduled event show it. */
export const scheduledSummarySchema = z.object({
  schedule_id: z.string().describe('sched_…: GET /schedules/{id}.'),
  next_run_at: z.string().nullable().describe('ISO 8601 UTC; null when it has no run left.'),
});
same<z.output<typeof scheduledSummarySchema>, ScheduledSummary>(true);

/** What the answers of POST / add to a task's: the schedules the request made. */
const runAnswerExtras = {
  schedules: z
    .array(scheduledSummarySchema)
    .optional()
    .describe('Only when the request had `schedules`: the schedule each entry became, in the same order.'),
};

export const taskResultSchema = z
  .union([completedResultSchema, unsuccessfulResultSchema])
  .describe('Result of a finished task: the output when completed, the error when failed or cancelled.');
same<z.output<typeof taskResultSchema>, ResultBody>(true);

export const runResultSchema = z
  .union([completedResultSchema.extend(runAnswerExtras), unsuccessfulResultSchema.extend(runAnswerExtras)])
  .describe(
    'The JSON answer of POST /: the finished run (as GET /tasks/{id}/result), plus the schedules the request made.',
  );
same<z.output<typeof runResultSchema>, ResultBody & { schedules?: ScheduledSummary[] }>(true);

export const taskMessageAcceptedSchema = z
  .object({
    task_id: z.string(),
    status: taskStatusSchema,
    pending: z.number().int().min(1).describe('Messages waiting for the next model turn, this one included.'),
  })
  .describe('The message was accepted.');
same<z.output<typeof taskMessageAcceptedSchema>, Awaited<ReturnType<TaskService['sendMessage']>>>(true);

export const taskAcceptedSchema = z
  .object({
    task_id: z.string(),
    session: z.string().describe('Send as ?session= to continue this conversation.'),
    status: taskStatusSchema.describe(
      'queued for a new task; the current status when an Idempotency-Key replays an earlier one.',
    ),
    created_at: z.string().describe('ISO 8601.'),
    steered: z
      .literal(true)
      .optional()
      .describe('multitask "steer": the message went into this running task of the session; nothing new started.'),
    ...runAnswerExtras,
  })
  .describe('A background task was accepted (or replayed by Idempotency-Key, or steered into).');

/** The same, as the one event of a background run's answer to a client that asked for a stream. */
export const taskAcceptedEventSchema = taskAcceptedSchema
  .extend({ type: z.literal('task_accepted') })
  .describe(
    'The one event of the stream a background run answers with when Accept asks for text/event-stream: the task, accepted (not one of its own events: those are at GET /tasks/{id}/events).',
  );

export const taskListSchema = z
  .object({
    tasks: z.array(
      z.object({
        task_id: z.string(),
        session: z.string(),
        status: taskStatusSchema,
        created_at: z.string(),
        completed_at: z.string().nullable(),
        preview: z.string().describe('The first 200 characters of the message.'),
      }),
    ),
    next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page.'),
  })
  .describe("The account's tasks, newest first.");
same<z.output<typeof taskListSchema>, ListPage>(true);

export {
  sessionCreatedSchema,
  sessionForkedSchema,
  sessionListSchema,
  sessionMessagesSchema,
} from './session-response-schemas';

export const healthSchema = z.object({ status: z.literal('ok') }).describe('The process is up (no dependency checks).');

export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    redis: z.string().describe('"ok" or "down: <reason>".'),
    temporal: z.string().describe('"ok" or "down: <reason>".'),
  })
  .describe('Whether Redis and Temporal answer.');

const eventBase = {
  session: z.string(),
  task_id: z.string(),
  seq: z
    .number()
    .int()
    .min(1)
    .describe(
      "1-based position in the task's event log, ascending; also the SSE `id:`. Gap-free unless the event relay lost events (then the run publishes its complete events again, `recovered`).",
    ),
  workflow_id: z.string().optional().describe("On a declarative workflow step's events: the workflow's id."),
  step_id: z.string().optional().describe("On a declarative workflow step's events: the step's id."),
  recovered: z
    .literal(true)
    .optional()
    .describe(
      "The event relay had lost this event; it was published again from the run's record in Temporal, later than its place. A recovered agent_response is a turn's whole answer (its streamed tokens were incomplete).",
    ),
  superseded: z
    .literal(true)
    .optional()
    .describe('A rewind abandoned the branch of the task this event belongs to (agent_rewound names the range).'),
};

const text = (what: string) => ({ content: z.string().describe(what) });
const callId = { tool_call_id: z.string().describe("Pairs a tool call's start, use and response.") };
const usageSchema = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() });

/** Every event type: its extra fields and meaning (SPEC 6.2, plus agent_error, agent_input and tool call ids). */
const EVENT_SHAPES = {
  agent_started: [{}, 'The agent run began.'],
  agent_scheduled: [
    { schedules: z.array(scheduledSummarySchema) },
    'The schedules the request made (its `schedules`), right after agent_started.',
  ],
  agent_thinking_start: [{}, 'Thinking output begins.'],
  agent_thinking: [text('A piece of reasoning.'), "A piece of the agent's reasoning (visible in flash mode)."],
  agent_response_start: [{}, 'Response output begins.'],
  agent_response: [text('Response text; a token with token streaming.'), "A piece of the agent's response."],
  agent_tool_use_start: [callId, 'Tool use begins.'],
  agent_tool_use: [{ ...text('JSON text: {"tool", "input"}.'), ...callId }, 'The agent calls a tool.'],
  agent_tool_response: [
    {
      ...text('JSON text: {"tool", "content"}.'),
      ...callId,
      is_error: z.boolean().optional().describe('The tool failed; the model was told and went on.'),
    },
    'The result of a tool call.',
  ],
  agent_step: [
    {
      step: z
        .string()
        .describe("The model turn number, as text; for a workflow step's end, `<workflow_id>/<step_id>`."),
      usage: usageSchema
        .optional()
        .describe("The turn's tokens, every attempt counted (a workflow step's: all its turns)."),
      name: z.string().optional().describe("A workflow step's end: the step's name."),
      status: z.enum(['completed', 'skipped', 'failed']).optional().describe("A workflow step's end: how it ended."),
    },
    "A model turn finished (after its tool calls, if any); with `status`, a declarative workflow's step ended.",
  ],
  agent_input: [
    text('The message.'),
    'A message sent into the running task (POST /tasks/{id}/messages), as the agent reads it.',
  ],
  agent_progress: [{ progress: z.number().min(0).max(1) }, 'Progress of the run, 0..1.'],
  agent_handoff: [
    {
      from: z.string().describe("The agent that had the conversation (`main`: the request's own)."),
      to: z.string().describe('The handoff agent that has it now.'),
    },
    'The conversation went to another agent (its transfer_to_<name> tool); from the next turn the model speaks as that agent.',
  ],
  agent_files_changed: [
    {
      tool_call_id: z.string().describe('The tool call that changed them (bash, str_replace_editor).'),
      created: z.array(z.string()).describe('Files it created, paths relative to the workspace, sorted.'),
      modified: z.array(z.string()).describe('Files it changed.'),
      deleted: z.array(z.string()).describe('Files it deleted.'),
    },
    "A tool call changed files of the session's workspace (GET /sessions/{id}/files lists and serves them); right after its agent_tool_response.",
  ],
  agent_screenshot: [
    {
      tool_call_id: z.string().describe('The browser call that took it (browser_take_screenshot).'),
      path: z.string().describe("Its file, relative to the session's workspace (e.g. screenshots/page-1.png)."),
      url: z.string().optional().describe('The page it shows.'),
    },
    "A browser call saved a screenshot in the session's workspace (GET /sessions/{id}/files/{path} serves it); after its agent_tool_response and agent_files_changed.",
  ],
  agent_approval_request: [
    {
      tool_call_id: z.string().describe('The call that waits.'),
      tool: z.string().describe('The tool as the model called it.'),
      input: z
        .unknown()
        .describe("The call's arguments as the model wrote them (parsed JSON; the text when not JSON)."),
      timeout_at: z.string().describe('When it stops waiting (ISO 8601).'),
    },
    "A tool call waits for a person's decision (require_approval): the task is input_required until every waiting call is decided (POST /tasks/{id}/approvals/{tool_call_id}).",
  ],
  agent_approval_decision: [
    {
      tool_call_id: z.string(),
      decision: z.enum(['approve', 'deny']),
      by: z.enum(['user', 'timeout']).describe('user: a decision was posted; timeout: none came in time.'),
      reason: z.string().optional().describe("The decision's reason, or why the time ran out."),
      input: z.unknown().optional().describe('The arguments the call runs with, when the decision edited them.'),
    },
    'The decision on a gated call: approved, it runs next (its agent_tool_response follows); denied, its result tells the model so.',
  ],
  agent_retry: [
    {
      what: z.enum(['model', 'tool']).describe('What failed: the model call of a turn, or a tool call.'),
      tool: z.string().optional().describe("The tool's name, for a tool call."),
      attempt: z.number().int().min(1).describe('The attempt that failed (1 = the first).'),
      error: errorInfoSchema,
      retry_in_ms: z.number().int().min(0).optional().describe('The wait before the next attempt, when known.'),
    },
    'An attempt failed and Temporal retries it (model calls: until MODEL_UNAVAILABLE_AFTER_MS, then agent_error model_unavailable). Stream-only.',
  ],
  agent_retract: [
    {
      from_seq: z.number().int().min(1).describe('The first seq whose text is void.'),
      attempt: z.number().int().min(2).describe('The attempt of the model turn that answers anew.'),
    },
    "A model turn's attempt was cut short after streaming part of its answer (its worker died, its stream stalled) and the turn answers again from the start: the agent_thinking_start, agent_thinking, agent_response_start and agent_response events of the same workflow_id/step_id (both absent: the task's own turns) from from_seq up to this event are void. Stream-only.",
  ],
  agent_rewound: [
    {
      step: z.number().int().min(1).describe('The model turn the task went back to (it runs again from there).'),
      run_id: z.string().describe('The Temporal run the task goes on in (the reset made it).'),
      superseded_seqs: z
        .object({ from_seq: z.number().int().min(1), to_seq: z.number().int().min(1) })
        .nullable()
        .describe('The seqs of the abandoned branch, read with superseded: true from now on.'),
    },
    'The task was rewound (POST /tasks/{id}/rewind): the events after it are the new branch, from turn `step` on.',
  ],
  agent_final_output: [
    {
      name: z.string().describe("final_output's name."),
      output: z.unknown().describe('The structured output, parsed; it fits the schema.'),
    },
    "The run's structured output (final_output), validated against its schema; right before agent_cost.",
  ],
  agent_cost: [{ cost: z.string().describe('A decimal number as text.') }, 'Cost of the run.'],
  agent_completed: [{}, 'The run is finished; the stream ends.'],
  agent_error: [{ error: errorInfoSchema }, 'The run failed (or was cancelled, or reached a cap); the stream ends.'],
} as const satisfies Record<EventType, [z.ZodRawShape, string]>;

const eventSchemas = <B extends z.ZodRawShape>(base: B) =>
  (Object.entries(EVENT_SHAPES) as [EventType, [z.ZodRawShape, string]][]).map(([type, [extra, description]]) =>
    z.object({ type: z.literal(type), ...base, ...extra }).meta({ title: type, description }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]];

export const agentEventSchema = z
  .discriminatedUnion('type', eventSchemas(eventBase))
  .describe('One server-sent event: `id: <seq>` and `data: <this object as JSON>`.');
same<Norm<AgentEvent>['type'], EventType>(true);

export const streamErrorSchema = z
  .object({ error: z.object({ type: z.literal('unavailable'), message: z.string() }) })
  .describe('Data of an `event: error` frame: the relay failed mid-stream; reconnect with Last-Event-ID.');

const validationIssueSchema = z.object({
  path: z
    .string()
    .describe(
      'Where: the part of the request, then each field after a dot and each array position in brackets (body.mcp_servers[0].serverUrl, query.cursor, path.id, header.Idempotency-Key; body alone for malformed JSON).',
    ),
  message: z.string(),
  code: z
    .string()
    .describe('What kind of problem, e.g. invalid_type, unrecognized_keys (an unknown field), invalid_cron.'),
});

/** The one error body of every failed request (error-handler.ts). */
export const errorBodySchema = z
  .object({
    error: z.object({
      type: z.string().describe('Machine-readable kind; fixed per HTTP status (see each response).'),
      message: z
        .string()
        .describe('What went wrong, for a human. A 400 opens with its first problem as <path>: <reason>.'),
      details: z
        .union([z.array(validationIssueSchema), z.record(z.string(), z.unknown()), z.null()])
        .describe(
          'The problems of a 400, each at its path, in the order found; an object (e.g. {dependency} on 503); or null.',
        ),
    }),
  })
  .describe('Error body of every non-2xx answer.');

export const webhookSecretSchema = z
  .object({
    secret: z.string().describe('The newest signing secret (whsec_ and base64): verify deliveries with it.'),
    secrets: z
      .array(
        z.object({
          secret: z.string(),
          created_at: z.string().describe('ISO 8601.'),
          expires_at: z
            .string()
            .nullable()
            .describe('Set on a secret a rotation replaced: deliveries carry its signature too until then (24 hours).'),
        }),
      )
      .describe('Every secret deliveries are signed with now, newest first.'),
  })
  .describe("The account's webhook signing secret (Standard Webhooks).");

export const deliveryListSchema = z
  .object({
    task_id: z.string(),
    deliveries: z.array(
      z.object({
        webhook_id: z.string().describe('The webhook-id header: the same on every attempt of this delivery.'),
        type: z
          .string()
          .describe('The event type, or task.completed | task.failed | task.cancelled for the final notification.'),
        status: z
          .enum(['pending', 'delivered', 'failed', 'gone', 'skipped'])
          .describe(
            'pending: not delivered yet (under way or waiting its turn); failed: every attempt failed; gone: the receiver answered 410; skipped: not sent after a 410.',
          ),
        attempts: z.number().int().min(0),
        last_status: z
          .number()
          .int()
          .nullable()
          .describe("The receiver's last HTTP status; null when it never answered."),
        last_error: z.string().nullable(),
        delivered_at: z.string().nullable(),
        next_attempt_at: z.string().nullable().describe('When the next attempt of a delivery under way is due.'),
      }),
    ),
  })
  .describe("A task's callback deliveries, in order.");
