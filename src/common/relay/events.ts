// The one union of every event the service streams to clients (SPEC 6.2, plus
// agent_error, agent_input and the tool call ids), growing with features. Every
// event carries type, session, task_id and seq. Pure types and constants: the
// workflows import its types.

export interface EventBase {
  session: string;
  task_id: string;
  /** 1-based position in the task's event log, gap-free; SSE `id:`. */
  seq: number;
  /** Set on the events of a DAG step (SPEC 2.3): the workflow's and the step's ids. */
  workflow_id?: string;
  step_id?: string;
  /**
   * The relay had lost this event (Redis was down or lost data when it was first published); it
   * was published again from the run's own record in Temporal, later than its place. A recovered
   * agent_response is a turn's whole answer: its streamed tokens were incomplete.
   */
  recovered?: true;
  /**
   * The event belongs to a branch of the task that a rewind abandoned (POST /tasks/{id}/rewind):
   * kept, readable by its seq, but no longer the task's story. Set as the event is read; the
   * agent_rewound event that superseded it names the range.
   */
  superseded?: true;
}

/** What a DAG step's events carry. */
export interface EventTag {
  workflow_id: string;
  step_id: string;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type AgentEventBody =
  | { type: 'agent_started' }
  /** The schedules the request made, right after agent_started (SPEC 2.5). */
  | { type: 'agent_scheduled'; schedules: { schedule_id: string; next_run_at: string | null }[] }
  | { type: 'agent_thinking_start' }
  | { type: 'agent_thinking'; content: string }
  | { type: 'agent_response_start' }
  | { type: 'agent_response'; content: string }
  /** A tool call begins; tool_call_id pairs it with its use and response. */
  | { type: 'agent_tool_use_start'; tool_call_id: string }
  /** content: JSON string {"tool", "input"}. */
  | { type: 'agent_tool_use'; content: string; tool_call_id: string }
  /** content: JSON string {"tool", "content"}; is_error when the tool failed (the model is told so and goes on). */
  | { type: 'agent_tool_response'; content: string; tool_call_id: string; is_error?: boolean }
  /** A model turn finished (after its tool calls, if any); usage is that turn's, every attempt counted. */
  | {
      type: 'agent_step';
      step: string;
      usage?: TokenUsage;
      /** A declarative workflow's step ended (then `step` is `<workflow_id>/<step_id>`). */
      workflow_id?: string;
      step_id?: string;
      name?: string;
      status?: 'completed' | 'skipped' | 'failed';
    }
  /** A message sent into the running task (POST /tasks/{id}/messages), as the agent takes it in. */
  | { type: 'agent_input'; content: string }
  | { type: 'agent_progress'; progress: number }
  /** The conversation went to another agent (a transfer_to_<name> call); `main` is the request's own agent. */
  | { type: 'agent_handoff'; from: string; to: string }
  /**
   * A tool call of the session's computer (bash, str_replace_editor) created, changed or deleted
   * files of the session's workspace: paths relative to it, after the call's agent_tool_response.
   */
  | { type: 'agent_files_changed'; tool_call_id: string; created: string[]; modified: string[]; deleted: string[] }
  /**
   * A browser call took a screenshot: `path` is its file in the session's workspace (relative to
   * it; GET /sessions/{id}/files/{path} serves it), `url` the page it shows; after the call's
   * agent_tool_response (and its agent_files_changed).
   */
  | { type: 'agent_screenshot'; tool_call_id: string; path: string; url?: string }
  /**
   * A tool call waits for a person's decision (an approval gate: the request's require_approval,
   * an MCP server's, or the deployment's): `input` is the call's arguments as the model wrote them
   * (parsed; the text itself when it is not JSON). The task is input_required until every waiting
   * call of it is decided; POST /tasks/{id}/approvals/{tool_call_id} decides this one.
   */
  | { type: 'agent_approval_request'; tool_call_id: string; tool: string; input: unknown; timeout_at: string }
  /**
   * The decision on a gated call: `by` says who made it (`user`: POST .../approvals, `timeout`: none
   * came in time). An approved call then runs (with `input` when the decision edited its
   * arguments); a denied one gets a tool result saying so, with `reason`.
   */
  | {
      type: 'agent_approval_decision';
      tool_call_id: string;
      decision: 'approve' | 'deny';
      by: 'user' | 'timeout';
      reason?: string;
      input?: unknown;
    }
  /**
   * An attempt of a model or tool call failed and Temporal retries it: `attempt` is the one that
   * failed, `retry_in_ms` the wait before the next when known. Stream-only (not in the result's events).
   */
  | {
      type: 'agent_retry';
      what: 'model' | 'tool';
      tool?: string;
      attempt: number;
      error: { type: string; message: string };
      retry_in_ms?: number;
    }
  /**
   * A model turn's attempt was cut short (its worker died, its stream stalled) after streaming
   * some of its answer, and the turn answers again from the start: every agent_thinking_start,
   * agent_thinking, agent_response_start and agent_response of the same step tag (workflow_id and
   * step_id, both absent for the task's own turns) from seq `from_seq` up to this event is void.
   * `attempt` is the attempt that answers anew. Stream-only (not in the result's events).
   */
  | { type: 'agent_retract'; from_seq: number; attempt: number }
  /**
   * The task was rewound to just before its model turn `step` (POST /tasks/{id}/rewind): the events
   * from `superseded_seqs.from_seq` to `superseded_seqs.to_seq` (null when there were none) belong to the
   * abandoned branch and are read with `superseded: true` from now on; the task's events go on
   * after this one, from that turn again, in the Temporal run `run_id`.
   */
  | {
      type: 'agent_rewound';
      step: number;
      run_id: string;
      superseded_seqs: { from_seq: number; to_seq: number } | null;
    }
  /** The run's structured output (final_output), validated against its schema; right before agent_cost. */
  | { type: 'agent_final_output'; name: string; output: unknown }
  | { type: 'agent_cost'; cost: string }
  | { type: 'agent_completed' }
  | { type: 'agent_error'; error: { type: string; message: string } };

export type AgentEvent = EventBase & AgentEventBody;

export type EventType = AgentEventBody['type'];

/** Events after which a task's stream ends. */
export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set(['agent_completed', 'agent_error']);
