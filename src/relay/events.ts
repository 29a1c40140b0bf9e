// The event union streamed to clients (SPEC 6.2 plus agent_error), growing with
// features. Every event carries type, session, task_id and seq.

export interface EventBase {
  session: string;
  task_id: string;
  /** 1-based position in the task's event log; SSE `id:`. */
  seq: number;
}

export type AgentEventBody =
  | { type: 'agent_started' }
  | { type: 'agent_thinking_start' }
  | { type: 'agent_thinking'; content: string }
  | { type: 'agent_response_start' }
  | { type: 'agent_response'; content: string }
  | { type: 'agent_tool_use_start' }
  | { type: 'agent_tool_use'; content: string }
  | { type: 'agent_tool_response'; content: string }
  | { type: 'agent_step'; step: string }
  | { type: 'agent_progress'; progress: number }
  | { type: 'agent_cost'; cost: string }
  | { type: 'agent_completed' }
  | { type: 'agent_error'; error: { type: string; message: string } };

export type AgentEvent = EventBase & AgentEventBody;

export type EventType = AgentEventBody['type'];

/** Events after which a task's stream ends. */
export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set(['agent_completed', 'agent_error']);

/** Events as published: the bodies numbered from seqStart, with their task and session. */
export function stampEvents(taskId: string, session: string, seqStart: number, bodies: readonly object[]): AgentEvent[] {
  return bodies.map((b, i) => ({ ...b, session, task_id: taskId, seq: seqStart + i }) as AgentEvent);
}
