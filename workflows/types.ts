// Shapes shared by workflows, activities and the gateway. Pure types and
// constants only: this file is bundled into the workflow sandbox.
import type { AgentEventBody, EventTag } from '../src/common/relay/events';

export type Mode = 'flash' | 'base' | 'max';
/** Every status of a task, in the order a task moves through them: the one list (schemas, metrics, views). */
export const TASK_STATUSES = ['queued', 'running', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Whether a task has ended (completed, failed or cancelled): shared by the gateway, the activities and the workflows. */
export function isFinished(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/**
 * A run request as a schedule keeps it in its workflows' inputs: the body of `POST /` as the
 * gateway read it when the schedule was made (its defaults filled in, `fast` read as `base`; the
 * request schema reads its own output back unchanged, test/activities/schedules.test.ts). Declared here, not taken from
 * the request schema (src/common/contracts/run-request.ts), so that a change of the HTTP schema does not silently change
 * what stored inputs are: the workflow
 * passes it on untouched, and the activity that builds each task (prepareScheduledTask) reads it
 * with the request schema of its time, failing that task by name if the API no longer takes it.
 */
export type StoredRunRequest = { message: string } & Record<string, unknown>;

/** A message of a session's thread (what the next run of the session reads). */
export interface ThreadMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A tool call the model made: its id, the tool's name and the arguments as the model wrote them (JSON text). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of a run's own thread: the session's kind, plus tool calls and their results. */
export type RunMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string; is_error?: boolean };

/**
 * What a task's run (agentTask) starts with: which task it is, then its settings in groups, each
 * meaning one thing, so that a reader (and a change) finds a field by what it is:
 *
 * - `request`: what the API caller asked, as the gateway read it (defaults filled in): the message
 *   and how to answer it, the tools and sources it brought, its workflows, final output, callback
 *   and schedules, its metadata.
 * - `limits`: what the run may use and how it is metered, fixed when the task starts from the
 *   deployment's settings: the caps (the caller's max_steps, max_cost, max_duration, else the
 *   deployment's defaults), the timeouts, the largest tool result, the built-in tools it may offer
 *   (BUILTIN_TOOLS: not the caller's) and the price its cost is counted at.
 * - `admission`: how the run gets to work: its session's turn (wait, join, or hold it from the
 *   start) and, in the background, one of the account's slots. `background` and `multitask` are
 *   the caller's words, but what they decide in a run is its admission (a slot; queue or refuse).
 *
 * The identity (taskId, account, session, createdAt) stays at the top, beside the groups: it names
 * the task they belong to rather than being one of their kind (the gateway makes the ids and the
 * time, the account is the caller's key's), and every part of the run and every activity call
 * reads it (relay keys, the session's and the slots' workflows, the status view), so a level of
 * its own would only lengthen the most-read fields. `step` (a DAG step's run) and `carry` (a
 * continuation's state) are set by the workflows themselves, never by a starter.
 *
 * Runs started before this shape carry it flat, every field at the top (FlatTaskInput): each
 * workflow that takes a TaskInput reads it with readTaskInput (workflows/task-input.ts), which
 * accepts both.
 */
export interface TaskInput {
  taskId: string;
  account: string;
  session: string;
  createdAt: string;
  request: TaskRequest;
  limits: TaskLimits;
  admission: TaskAdmission;
  /** Set on a DAG step's run: its events' workflow and step ids, its thread's workflow, its producers' prefix on the relay. */
  step?: DagStepRun;
  /** What an earlier run of this task handed over when it continued as new. */
  carry?: RunCarry;
}

/** What the API caller asked (TaskInput): the run request as the gateway read it. */
export interface TaskRequest {
  message: string;
  system?: string;
  rules?: string[];
  mode: Mode;
  /** Publish agent_response/agent_thinking token by token (else one event per block). */
  streamTokens: boolean;
  metadata: Record<string, unknown>;
  /**
   * MCP tool servers of this request (SPEC 2.2), tokens included: the payload
   * codec encrypts them in history, and nothing outside this run keeps them.
   */
  mcpServers?: McpServerConfig[];
  /** Handoff agents the model can transfer the conversation to (transfer_to_<name>). */
  agents?: HandoffAgent[];
  /** Tool calls that wait for a person's decision before they run (require_approval; docs/approvals.md). */
  requireApproval?: ApprovalRule;
  /** The request's datastores and named queries (SPEC 2.1): their tools are bound at the run's start. */
  datastores?: RequestedDatastore[];
  queries?: RequestedQuery[];
  /** Declarative workflows (SPEC 2.3): run as child workflows before the agent answers the message. */
  workflows?: DagWorkflow[];
  /** A structured output after the last answer (SPEC 2.6): one more model call, validated, repaired up to twice. */
  finalOutput?: FinalOutputSpec;
  /** Where the task's events and its end are POSTed (callback), with the service's delivery schedule. */
  callback?: CallbackConfig;
  /** The schedules the request made (SPEC 2.5): announced by agent_scheduled right after agent_started. */
  schedules?: ScheduledSummary[];
}

/** What the run may use and how it is metered (TaskInput): the deployment's settings when the task started. */
export interface TaskLimits {
  /** Model turns the run may take (max_steps). */
  maxSteps: number;
  /** USD the run may spend (max_cost); absent = no limit. */
  maxCost?: number;
  /** The longest the agent may work, ms, from when the run starts working (max_duration); absent = no limit. */
  maxDurationMs?: number;
  /** Built-in tools offered to the model (names in workflows/tool-registry.ts; BUILTIN_TOOLS). */
  tools: string[];
  /** A tool result longer than this many characters is cut (TOOL_RESULT_MAX_CHARS). */
  toolResultMaxChars: number;
  /** Heartbeat timeout of model calls (how fast a lost worker is noticed). */
  modelHeartbeatTimeoutMs: number;
  /** Longest call of a computer tool (bash, str_replace_editor, glob, grep), ms: BASH_TIMEOUT_MAX_S and a margin. */
  computerCallTimeoutMs?: number;
  /** The run's commands may use the network, through the outbound policy (request `computer.network`). */
  computerNetwork?: true;
  /** Pages the run may open with browser_navigate (BROWSER_MAX_PAGES_PER_RUN); absent when it offers no browser. */
  browserMaxPages?: number;
  /** Longest browser call, ms (BROWSER_NAVIGATION_TIMEOUT_S and a margin); absent when it offers no browser. */
  browserCallTimeoutMs?: number;
  /** The deployment's approval gates (APPROVAL_REQUIRED_TOOLS): offered tool names or glob patterns; absent when none. */
  approvalTools?: string[];
  /** How long a gated call waits for a decision when the request says nothing, ms (APPROVAL_TIMEOUT_S). */
  approvalTimeoutMs?: number;
  /** Longest MCP tool call, ms (MCP_CALL_TIMEOUT_MS). */
  mcpCallTimeoutMs?: number;
  /** Connecting to an MCP server and listing its tools, per attempt, ms (MCP_CONNECT_TIMEOUT_MS). */
  mcpConnectTimeoutMs?: number;
  /**
   * USD per million tokens of the mode's model, resolved by the gateway from
   * its price table, so the run's cost is computed (and visible) in the
   * workflow's own history. Absent: the model has no price (cost 0).
   */
  price?: Price;
}

/** How the run gets to work (TaskInput): its session's turn and, in the background, an account slot. */
export interface TaskAdmission {
  /** The caller does not wait for the answer: the run takes one of the account's running slots. */
  background: boolean;
  /** Wait for the session's turn (default) or fail at once when it is busy (the gateway's reservation). */
  multitask: 'queue' | 'reject';
  /**
   * Background tasks: the account's running-task limit; `releasedByEnd`: the run gives its slot
   * back from its end activity (publishEnd), not by a signal of its own. Runs started before it
   * was set signal; said in the input, not by a patch, which would cost every run a marker and a
   * TemporalChangeVersion upsert.
   */
  slots?: { limit: number; releasedByEnd?: true };
  /**
   * The starter (the gateway) puts the run in its session's turn order itself,
   * so the run waits for its turn without signalling the session; it only
   * joins on its own when no turn came within a grace period (the starter
   * died before joining it, or the session offered the turn before the run
   * existed). That grace period, ms (default 30 s: long enough not to fire
   * while a loaded worker catches up).
   */
  joinGraceMs?: number;
  /**
   * The gateway created the run's session with this run already holding the
   * turn (SessionState.active): a new session has no thread and no other run
   * to wait for, so the run neither waits for a grant nor joins. It still hands
   * the turn back (turnDone) at its end, creating the session then if the
   * gateway's start of it never happened. Absent on runs of existing sessions.
   */
  ownsTurn?: boolean;
  /**
   * Nobody puts this run in its session's turn order for it (a run a schedule
   * started): it joins the session itself at once, reopening it when closed.
   */
  joinsSession?: boolean;
  /**
   * With ownsTurn: the session has no workflow yet, and gets none for this run
   * (a run that named no session). The run hands nothing over at its end; its
   * session opens only when something uses it (a later run, a read of the
   * thread), and then takes this run's handover from the run itself
   * (handoverQuery) once it has closed. Saves a workflow start, three
   * workflow tasks, a watch activity and two signals per such run.
   */
  lazySession?: boolean;
}

/** A DAG step's run (TaskInput.step): its events' tag, the workflow its thread lives in, its producers' prefix. */
export interface DagStepRun {
  tag: EventTag;
  threadWorkflowId: string;
  producerPrefix: string;
  responseFormat?: object;
}

/** A declarative workflow of a request (SPEC 2.3): steps that depend on each other. */
export interface DagWorkflow {
  id: string;
  name: string;
  description: string;
  steps: DagStep[];
}

/** A workflow's step (SPEC 2.4): an agent run on its description, the request, and its dependencies' outputs. */
export interface DagStep {
  id: string;
  name: string;
  description: string;
  depends_on: string[];
  optional?: boolean;
  retry_policy?: {
    max_attempts?: number;
    backoff?: 'exponential' | 'fixed';
    initial_interval?: number;
    max_interval?: number;
  };
  output_schema?: Record<string, unknown>;
}

/** A request's final_output: the output's name, its JSON Schema, and whether the model is held to it strictly. */
export interface FinalOutputSpec {
  name: string;
  strict: boolean;
  schema: Record<string, unknown>;
}

/** A schedule a run request made: its id and its next run (ISO 8601 UTC; null when it has none left). */
export interface ScheduledSummary {
  schedule_id: string;
  next_run_at: string | null;
}

/** The state a run hands to its continuation (continue-as-new keeps history bounded on long runs). */
export interface RunCarry {
  view: TaskView;
  thread: RunMessage[];
  /** Number of session messages before the run's own (read from the session by the model activity). */
  sessionMessages: number;
  /** Complete-block events for the result so far. */
  blocks: BlockEvent[];
  step: number;
  usage: Usage;
  /** The highest event seq the run has heard of. */
  seqFloor: number;
  /** Messages sent into the task not yet taken in. */
  inbox: string[];
  /** Events of finished work not yet published (a tool turn's agent_step, results of timer tools). */
  pending: BlockEvent[];
  /** How far the run's callback has been fed (with a callback). */
  callback?: { sent: number; started: boolean };
  /** The run holds its session's turn and an account slot (if background). */
  holdsTurn: boolean;
  /** It holds the turn of a session not opened yet (TaskAdmission.lazySession): nothing to hand back by signal. */
  lazyTurn?: boolean;
  holdsSlot: boolean;
  output: string;
  /** The MCP servers' tools, listed once at the run's start. */
  mcpTools?: McpTool[];
  /** The datastores' tools, bound once at the run's start. */
  datastoreTools?: DatastoreToolDef[];
  /** The handoff agent that has the conversation; absent: the main agent. */
  agent?: string;
  /** When max_duration ends the work (epoch ms), set by the first run. */
  deadlineAt?: number;
  /** The relay failed to take some of the run's events: its end republishes what is missing from its record. */
  relayLost?: true;
  /** The decisions on the run's gated calls so far (a repeated decision answers with the first). */
  decisions?: ApprovalDecision[];
  /**
   * The relay epoch the run publishes in (absent: 0): a rewind opens a new one, and the run's
   * producers are prefixed r<epoch>: from then on (src/common/relay/rewind.ts).
   */
  epoch?: number;
  /** The reset run whose rewind the run has taken in (its model turn found it: activities/rewind-check.ts). */
  rewoundRun?: string;
}

/**
 * What a rewind asked of the run it made, as the reset's reason carries it (the message encrypted
 * like any payload) and the model activity reads it back (src/common/tasks/rewind-spec.ts).
 */
export interface RewindSeen {
  /** The reset run this is about. */
  runId: string;
  /** The relay epoch of the new branch; absent: the reset was not a rewind (the Web UI's): the next epoch. */
  epoch?: number;
  /** A message for the model before the turn: added to the thread, or replacing its last user message. */
  message?: string;
  replace?: boolean;
  /** The task had finished: the run takes its session's turn (and an account slot) again before the turn. */
  rejoin?: boolean;
}

/** An MCP server as a run uses it: `auth` of either kind becomes one bearer token. */
export interface McpServerConfig {
  name: string;
  url: string;
  token?: string;
  /** Which of its tools (by their own names) wait for a person's decision; absent: none ("never"). */
  requireApproval?: McpApproval;
}

/** An MCP server's require_approval, OpenAI's convention: all, none, or by tool name (`never` wins over `always`). */
export type McpApproval = 'always' | 'never' | { always?: { tool_names: string[] }; never?: { tool_names: string[] } };

/** A request's require_approval: the tools (offered names or glob patterns) whose calls wait for a decision. */
export interface ApprovalRule {
  tools: string[];
  /** How long a call waits, s; absent: the deployment's APPROVAL_TIMEOUT_S. */
  timeout?: number;
  /** What a call that got no decision in time does: denied (the model hears so) or the run fails. */
  onTimeout: 'deny' | 'fail';
}

/** A gated call waiting for its decision, as GET /tasks/{id} shows it. */
export interface PendingApproval {
  tool_call_id: string;
  tool: string;
  input: unknown;
  /** When the call began to wait, and when it stops waiting (ISO 8601 UTC). */
  since: string;
  timeout_at: string;
  /** A workflow step's call: the step's child workflow, where it waits (and is decided). */
  workflow_id?: string;
}

/** A decision on a gated call (the approval update's answer, the same for the same decision again). */
export interface ApprovalDecision {
  tool_call_id: string;
  decision: 'approve' | 'deny';
  by: 'user' | 'timeout';
  reason?: string;
  input?: unknown;
  decided_at: string;
  /** A workflow step's call: the step's child workflow, which took the decision. */
  workflow_id?: string;
}

/** A tool of an MCP server, as listed at the run's start and kept in the run's state. */
export interface McpTool {
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  /** The unique, sanitised name the model calls it by (`<server>__<tool>`). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A datastore as a request names it: a registered id, and the name its tools go by. */
export interface RequestedDatastore {
  id: string;
  name: string;
}

/** A named query of a request: one tool, one argument per positional marker. */
export interface RequestedQuery {
  name: string;
  description: string;
  query: string;
  /** The datastore it runs on (id or name); absent: the request's only SQL datastore. */
  datastore?: string;
}

/**
 * A datastore tool as the run offers it (src/common/datastores/bindings.ts makes them):
 * `describe` the tables, `sql` the model's own SELECT (allow_sql), `search` a
 * documents datastore, `named` a request's query with its parameters.
 */
export interface DatastoreToolDef {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  datastoreId: string;
  /** The name the request gave it (the Web UI shows calls as datastore/<name>). */
  datastoreName: string;
  op: 'describe' | 'sql' | 'search' | 'named';
  /** `named`: the query text and how many positional markers it has. */
  query?: string;
  markers?: number;
}

export interface HandoffAgent {
  name: string;
  description: string;
}

export interface Price {
  input: number;
  output: number;
}

/** The run's cost in USD as a decimal string (6 places); deterministic, so workflow code may call it. */
export function costOf(usage: Usage, price: Price | undefined): string {
  if (!price) return '0.000000';
  return ((usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000).toFixed(6);
}

/** A task's status document as it starts: queued, nothing run yet. */
export function initialView(input: TaskInput): TaskView {
  return {
    task_id: input.taskId,
    session: input.session,
    account: input.account,
    status: 'queued',
    progress: 0,
    current_step: null,
    error: null,
    metadata: { ...input.request.metadata },
    created_at: input.createdAt,
    started_at: null,
    completed_at: null,
  };
}

/** One complete-block event as kept in the result (no seq/session/task_id). */
export type BlockEvent = AgentEventBody;

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** Two usages added (a run's turns, its steps, its final output). */
export function addUsage(a: Usage, b: Usage): Usage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}

export interface TaskResult {
  task_id: string;
  session: string;
  status: 'completed';
  output: string;
  events: BlockEvent[];
  cost: string;
  usage: Usage;
  /** The validated structured output, when the request asked for one (final_output). */
  final_output?: { name: string; output: unknown };
}

/** A completed run's result as clients read it (the workflow's own result adds its usage). */
export type CompletedBody = Omit<TaskResult, 'usage'>;

/**
 * What a run that failed after producing something (a cap reached) keeps: the
 * details of its failure, so its result can show them.
 */
export interface PartialResult {
  output: string;
  events: BlockEvent[];
  cost: string;
}

export interface TaskView {
  task_id: string;
  session: string;
  account: string;
  status: TaskStatus;
  progress: number;
  current_step: string | null;
  error: { type: string; message: string } | null;
  metadata: Record<string, unknown>;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** The calls waiting for a decision (status input_required); absent when none ever waited. */
  approvals?: PendingApproval[];
  /** A request with workflows (SPEC 2.3): each one's steps, what each waits for, and where it is. */
  workflows?: WorkflowView[];
}

/** A declarative workflow of a task as GET /tasks/{id} shows it (the web console draws it). */
export interface WorkflowView {
  id: string;
  name: string;
  steps: { id: string; name: string; depends_on: string[]; status: StepStatus }[];
}

/** pending: waiting for the steps it depends on (or never run); running: started; then how it ended (cancelled: stopped with its run). */
export type StepStatus = 'pending' | 'running' | 'completed' | 'skipped' | 'failed' | 'cancelled';

/**
 * The error of a task whose run Temporal closed without the run's own end (terminated or timed
 * out from outside, or no longer there): what GET /tasks/{id}, the stream's closing event and a
 * callback's final notification all say.
 */
export const OUTSIDE_END_ERRORS = {
  TERMINATED: { type: 'terminated', message: 'the task was terminated' },
  TIMED_OUT: { type: 'timeout', message: 'the task timed out' },
  NOT_FOUND: { type: 'vanished', message: 'the run no longer exists in Temporal' },
} as const;

export const SEARCH_ATTRIBUTES = {
  status: 'TaskStatus',
  account: 'TaskAccount',
  session: 'TaskSession',
  /** The schedule that started a task (GET /tasks?schedule=), and that a schedule belongs to. */
  schedule: 'TaskSchedule',
  /** Set on a run that began a session not opened yet (its id); GET /sessions lists such sessions by it. */
  opensSession: 'TaskOpensSession',
} as const;

/** Workflow id of a session (sessions are scoped by account, so ids never collide across accounts). */
export function sessionWorkflowId(account: string, session: string): string {
  return `session:${account}:${session}`;
}

/** A task's callback: the receiver, its headers (secrets: ciphertext in history), what it wants, how to retry. */
export interface CallbackConfig {
  url: string;
  headers: Record<string, string>;
  /** Event types to deliver, and `completed` | `failed` | `cancelled` for the final notification; absent = all. */
  events?: string[];
  /** Wait before each retry of a delivery, ms (CALLBACK_RETRY_DELAYS); attempts = length + 1. */
  retryDelaysMs: number[];
  /** Longest wait for the receiver's answer, ms (CALLBACK_TIMEOUT_MS). */
  timeoutMs: number;
  /** How often the idle delivery workflow checks that its task still runs, ms (RUN_WATCH_MS; default 60 s). */
  watchMs?: number;
}

/** One delivery: its stable webhook-id, what it is, and its JSON body. */
export interface DeliveryItem {
  id: string;
  /** The event type, or task.completed | task.failed | task.cancelled for the final notification. */
  type: string;
  body: string;
}

export interface DeliveryRecord {
  webhook_id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed' | 'gone' | 'skipped';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}
