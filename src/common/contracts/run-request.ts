// The API's run request (the body of `POST /`, SPEC 2.1) as a contract between the processes:
// the gateway parses run requests with it (routes/run.ts; the OpenAPI document is generated
// from it), and the worker's activities read a schedule's stored request back with it
// (activities/schedules.ts: a schedule keeps the body as the gateway read it, and each of its
// tasks re-reads it with the schema of its time). Here, below both processes, so that neither
// imports the other's room for it (docs/architecture.md, "Who imports what").
import { z } from 'zod';
import { RESERVED_HEADERS } from '../callbacks/signature';
import { BUILTIN_TOOL_CHOICES } from '../../../workflows/tool-registry';
import { TOOL_PATTERN } from '../approval-config';

/**
 * A character that trimming keeps: anything but what JavaScript's String.prototype.trim removes.
 * Spelled out rather than \S, since other engines read the document's patterns too (Python's re
 * takes \s for a wider set): a text the document accepts is one the service does.
 */
const KEPT_BY_TRIM = /[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * A text with something in it besides white space, of at most `max` characters as sent (the
 * document's maxLength), trimmed once read: the checks run before the trim, so they are the
 * document's own.
 */
export function text(max?: number) {
  const s = z.string().regex(KEPT_BY_TRIM, 'must hold more than white space');
  return (max === undefined ? s : s.max(max)).trim();
}
export const nonEmpty = text();

/** What a run's `mode` may be: `fast` is another name of `base` (runRequestSchema says so once). */
export const MODES = ['flash', 'base', 'fast', 'max'] as const;

const toolNames = z.strictObject({ tool_names: z.array(text(128)).max(200) });
const mcpApprovalSchema = z.union([
  z.enum(['always', 'never']),
  z.strictObject({ always: toolNames.optional(), never: toolNames.optional() }),
]);

/** require_approval of a run request: its tools' calls wait for a person's decision (docs/approvals.md). */
export const approvalRuleSchema = z
  .strictObject({
    tools: z
      .array(z.string().regex(TOOL_PATTERN, 'a tool name or glob pattern (letters, digits, _ . - * ?)'))
      .min(1)
      .max(100)
      .describe(
        'Tool names as the model is offered them (MCP tools: <serverName>__<tool>), or glob patterns: * any run of characters, ? one.',
      ),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .optional()
      .describe(
        "Seconds a call waits for a decision (default: the deployment's APPROVAL_TIMEOUT_S, one day unless set).",
      ),
    on_timeout: z
      .enum(['deny', 'fail'])
      .default('deny')
      .describe(
        'No decision in time: deny (the model hears the call was not run) or fail the run (error approval_timeout).',
      ),
  })
  .describe("Tool calls that wait for a person's decision before they run: POST /tasks/{id}/approvals/{tool_call_id}.");

export const mcpServerSchema = z.strictObject({
  serverName: text(64).describe('Name of the tool server; its tools reach the model as <serverName>__<tool>.'),
  serverUrl: z
    .url()
    .describe(
      'http(s) URL of the server: Streamable HTTP, or the legacy HTTP+SSE endpoint (…/sse). Loopback, private and link-local addresses are refused unless OUTBOUND_ALLOWLIST names them.',
    ),
  auth: z
    .discriminatedUnion('type', [
      z.strictObject({ type: z.literal('bearer'), token: nonEmpty }),
      z.strictObject({ type: z.literal('oauth'), oauth: z.strictObject({ accessToken: nonEmpty }) }),
    ])
    .optional(),
  require_approval: mcpApprovalSchema
    .optional()
    .describe(
      'Which of its tools wait for a decision before each call (OpenAI\'s convention): "always", "never" (default), or {always: {tool_names}, never: {tool_names}} by the tools\' own names (never wins).',
    ),
  requireApproval: mcpApprovalSchema.optional().describe('Alias of require_approval.'),
});

export const stepSchema = z.strictObject({
  id: nonEmpty,
  name: nonEmpty,
  description: nonEmpty,
  depends_on: z.array(nonEmpty),
  optional: z.boolean().optional(),
  retry_policy: z
    .strictObject({
      max_attempts: z.number().int().min(1).max(100).optional().describe('Attempts in all, the first included.'),
      backoff: z
        .enum(['exponential', 'fixed'])
        .optional()
        .describe('exponential: each wait twice the last; fixed: the same wait each time.'),
      initial_interval: z.number().positive().max(86_400).optional().describe('Seconds before the first retry.'),
      max_interval: z.number().positive().max(86_400).optional().describe('Longest wait between attempts, seconds.'),
    })
    .optional(),
  output_schema: z.record(z.string(), z.unknown()).optional(),
});

export const workflowSchema = z.strictObject({
  id: nonEmpty,
  name: nonEmpty,
  description: nonEmpty,
  steps: z.array(stepSchema).min(1),
});

/** What a callback may ask for: every complete-block event type of the stream, and the final notification's outcomes. */
export const CALLBACK_EVENT_TYPES = [
  'agent_started',
  'agent_scheduled',
  'agent_thinking_start',
  'agent_thinking',
  'agent_response_start',
  'agent_response',
  'agent_tool_use_start',
  'agent_tool_use',
  'agent_tool_response',
  'agent_step',
  'agent_input',
  'agent_handoff',
  'agent_files_changed',
  'agent_screenshot',
  'agent_final_output',
  'agent_cost',
  'agent_completed',
  'agent_error',
  'completed',
  'failed',
  'cancelled',
] as const;

/**
 * A header name that is none of the delivery's own (RESERVED_HEADERS, any case). Written
 * without regex flags, which a JSON Schema pattern cannot carry: each letter as [xX].
 */
const UNRESERVED_HEADER = new RegExp(
  `^(?!(?:${RESERVED_HEADERS.map((h) => h.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)).join('|')})$)`,
);

const callbackSchema = z.strictObject({
  url: z.url().max(2048),
  headers: z
    .record(
      z
        .string()
        .min(1)
        .max(256)
        .regex(UNRESERVED_HEADER, 'set by the delivery itself (a hop-by-hop, body or signature header)'),
      z.string().max(8192),
    )
    .optional()
    .describe(
      `Sent with every delivery as given; none of ${RESERVED_HEADERS.join(', ')} (any case): the delivery sets those itself.`,
    ),
  events: z
    .array(z.enum(CALLBACK_EVENT_TYPES))
    .min(1)
    .optional()
    .describe(
      'What to deliver: event types (complete blocks), and completed | failed | cancelled for the final notification. Default: every event and the final notification.',
    ),
});

/** How a recurring schedule treats a run that comes while its last task is still going. */
export const SCHEDULE_OVERLAPS = ['skip', 'buffer_one', 'allow_all'] as const;

export const scheduleSchema = z.strictObject({
  schedule: z
    .union([
      z
        .number()
        .positive()
        .max(366 * 86400),
      text(256),
    ])
    .describe(
      'Seconds from now (one run), an ISO 8601 date-time with its zone (one run at that instant), or a five-field cron string (minute hour day-of-month month day-of-week: a recurring schedule).',
    ),
  message: nonEmpty.describe('The message each scheduled task runs the agent with.'),
  timezone: text(64).optional().describe('IANA time zone of a cron schedule (e.g. Europe/Paris); default UTC.'),
  overlap: z
    .enum(SCHEDULE_OVERLAPS)
    .optional()
    .describe(
      "When a run comes while the schedule's last task is still going: skip it (default), start it once that task ends (buffer_one), or start it anyway (allow_all).",
    ),
});

export type ScheduleRequest = z.infer<typeof scheduleSchema>;

/** Two names of one field (an alias): a request gives one of them. */
const EXCLUSIVE_FIELDS = [
  ['mcp_servers', 'mcpServers'],
  ['callback', 'webhook'],
] as const;
/** The fields that name a callback: each goes with `background: true`. */
const CALLBACK_FIELDS = ['callback', 'webhook'] as const;

export const runRequestSchema = z
  .strictObject({
    message: nonEmpty.describe('The task or message to run the agent with.'),
    system: z.string().optional().describe("System prompt; default: the service's own."),
    mode: z
      .enum(MODES)
      .default('base')
      // One mode, two names: the SPEC's `base` is Agentbase's `fast` (its SDK's and docs' name, and their default).
      .transform((m) => (m === 'fast' ? 'base' : m))
      .describe(
        "flash: simple one-off tasks, the thinking shown in the stream; base (also named fast, as Agentbase's SDKs and docs call it: the same mode): balanced, the default; max: complex reasoning.",
      ),
    workflows: z.array(workflowSchema).optional(),
    rules: z.array(nonEmpty).optional(),
    agents: z
      .array(z.strictObject({ name: text(64), description: text(4000) }))
      .max(50)
      .optional()
      .describe(
        'Handoff agents: the model gets a transfer_to_<name> tool for each; the session remembers the agent that has the conversation.',
      ),
    tools: z
      .array(z.enum(BUILTIN_TOOL_CHOICES))
      .max(20)
      .optional()
      .describe(
        "The built-in tools the model is offered (default: the deployment's BUILTIN_TOOLS; [] = none): current_time, calculate, wait, the session's computer (`computer` = bash, str_replace_editor, glob and grep) and the web (`web` = web_fetch, and web_search where the deployment has a search provider); or each by name. Only tools the deployment offers may be named (422 otherwise).",
      ),
    computer: z
      .strictObject({
        network: z
          .boolean()
          .default(false)
          .describe(
            "Commands may reach the network through the deployment's outbound policy (HTTP_PROXY and HTTPS_PROXY inside the sandbox; loopback, private and link-local addresses refused unless OUTBOUND_ALLOWLIST names them). Needs the bash tool, and a deployment that allows it (SANDBOX_NETWORK; 422 otherwise).",
          ),
      })
      .optional()
      .describe("Settings of the session's computer for this run (default: commands have no network)."),
    require_approval: approvalRuleSchema.optional(),
    mcp_servers: z.array(mcpServerSchema).max(20).optional(),
    mcpServers: z.array(mcpServerSchema).max(20).optional().describe('Alias of mcp_servers.'),
    background: z.boolean().default(false),
    callback: callbackSchema
      .optional()
      .describe(
        'With background: true, POSTs each event and the final notification to url, signed (Standard Webhooks), retried durably.',
      ),
    webhook: callbackSchema
      .optional()
      .describe(
        'Alias of callback (SPEC 6.4\'s example): {url, events: ["completed", "failed"]} gets the final notification only.',
      ),
    datastores: z
      .array(
        z.strictObject({
          id: text(64).describe('A registered datastore (POST /datastores).'),
          name: text(48).describe('What its tools are named after: describe_<name>, query_<name>, search_<name>.'),
        }),
      )
      .max(20)
      .optional()
      .describe('Data sources the agent may read (SPEC 2.1): registered datastores of the account.'),
    queries: z
      .array(
        z.strictObject({
          name: text(64).describe("The tool's name."),
          description: text(4000),
          query: text(20_000).describe(
            "One read-only statement; positional markers ($1, $2... for PostgreSQL, ? for SQLite) become the tool's arguments p1, p2...",
          ),
          datastore: text(64)
            .optional()
            .describe("Id or name of one of the request's datastores; absent: its only SQL datastore."),
        }),
      )
      .max(50)
      .optional()
      .describe('Named queries (SPEC 2.1): one tool each, parameters bound by the database driver.'),
    streaming_tokens: z.boolean().optional(),
    streaming: z.boolean().optional().describe('true: token by token, like streaming_tokens.'),
    schedules: z
      .array(scheduleSchema)
      .min(1)
      .max(20)
      .optional()
      .describe(
        "Later runs of the agent (SPEC 2.5): each entry becomes a schedule (GET /schedules) whose runs are background tasks in this request's session.",
      ),
    final_output: z
      .strictObject({
        name: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
          .describe('Name of the structured output.'),
        strict: z
          .boolean()
          .default(false)
          .describe(
            'true: the schema keeps to the strict subset (every object additionalProperties: false, every property required) and the model is held to it.',
          ),
        schema: z
          .object({ type: z.literal('object') })
          .catchall(z.unknown())
          .describe(
            'JSON Schema (draft-07) of the output; its root is an object ("type": "object"). One that is not a valid JSON Schema, or with strict: true outside the strict subset, is a 422.',
          ),
      })
      .optional()
      .describe(
        'After the last answer, one more model call gives a structured output that fits schema (validated; repaired up to twice); the answer and the result carry it as final_output.',
      ),
    max_steps: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Model turns the run may take (default MAX_STEPS_DEFAULT, at most MAX_STEPS_CEILING); reaching it ends the run with agent_error step_limit.',
      ),
    max_cost: z
      .number()
      .positive()
      .optional()
      .describe(
        'USD the run may spend; once reached, no further model turn starts and the run ends with agent_error budget_exceeded.',
      ),
    max_duration: z
      .number()
      .int()
      .min(1)
      .max(31_536_000)
      .optional()
      .describe(
        'Seconds the agent may work, from when the run starts (default MAX_DURATION_DEFAULT, none when 0); reaching it cancels what is in flight and ends the run with agent_error max_duration.',
      ),
    multitask: z
      .enum(['queue', 'reject', 'steer', 'interrupt'])
      .default('queue')
      .describe(
        "When the session is busy: wait for its turn (queue), answer 409 (reject), or steer: the message goes into the session's running run (as POST /tasks/{id}/messages does) and the answer is that run's own (its task_id; X-Steered: true); with no run running, the request runs as with queue; or interrupt: the running run is cancelled (its exchange so far kept in the thread, marked interrupted; its status cancelled, error interrupted) and this request runs at once after it.",
      ),
    metadata: z.record(z.string(), z.unknown()).default({}).describe('Initial user metadata of the task.'),
  })
  .superRefine((r, ctx) => {
    for (const [a, b] of EXCLUSIVE_FIELDS)
      if (r[a] && r[b]) ctx.addIssue({ code: 'custom', message: `give ${a} or ${b}, not both`, path: [b] });
    // A steered message starts nothing: what would belong to a new task would be lost.
    for (const field of ['schedules', ...CALLBACK_FIELDS] as const)
      if (r.multitask === 'steer' && r[field])
        ctx.addIssue({
          code: 'custom',
          message: `multitask "steer" starts no task of its own, so it takes no ${field}`,
          path: ['multitask'],
        });
    for (const field of CALLBACK_FIELDS) {
      if (r[field] && !r.background)
        ctx.addIssue({
          code: 'custom',
          message: 'a callback needs background: true (a synchronous run answers in its response)',
          path: [field],
        });
    }
  })
  // The same rules for the document (a refinement does not show in a JSON Schema).
  .meta({
    allOf: [
      ...EXCLUSIVE_FIELDS.map(([a, b]) => ({ not: { required: [a, b] } })),
      ...CALLBACK_FIELDS.map((field) => ({
        if: { required: [field] },
        then: { required: ['background'], properties: { background: { const: true } } },
      })),
      {
        if: { required: ['multitask'], properties: { multitask: { const: 'steer' } } },
        then: { not: { anyOf: ['schedules', ...CALLBACK_FIELDS].map((f) => ({ required: [f] })) } },
      },
    ],
  });

export type RunRequest = z.infer<typeof runRequestSchema>;
