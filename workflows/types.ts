// Shapes shared by workflows, activities and the gateway. Pure types and
// constants only: this file is bundled into the workflow sandbox.

export type Mode = 'flash' | 'base' | 'max';
export type TaskStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface ThreadMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface TaskInput {
  taskId: string;
  account: string;
  session: string;
  message: string;
  system?: string;
  rules?: string[];
  mode: Mode;
  /** Publish agent_response/agent_thinking token by token (else one event per block). */
  streamTokens: boolean;
  background: boolean;
  createdAt: string;
  metadata: Record<string, unknown>;
  /** Wait for the session's turn (default) or fail at once when it is busy. */
  multitask: 'queue' | 'reject';
  /** Heartbeat timeout of model calls (how fast a lost worker is noticed). */
  modelHeartbeatTimeoutMs: number;
  /** Background tasks: the account's running-task limit, and the slot lease. */
  slots?: { limit: number; leaseMs: number };
}

/** One complete-block event as kept in the result (no seq/session/task_id). */
export interface BlockEvent {
  type: string;
  content?: string;
  step?: string;
  cost?: string;
  error?: { type: string; message: string };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface TaskResult {
  task_id: string;
  session: string;
  status: 'completed';
  output: string;
  events: BlockEvent[];
  cost: string;
  usage: Usage;
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
}

export const SEARCH_ATTRIBUTES = {
  status: 'TaskStatus',
  account: 'TaskAccount',
  session: 'TaskSession',
} as const;

export const MAX_AGENT_STEPS = 8;

/** Workflow id of a session (sessions are scoped by account, so ids never collide across accounts). */
export function sessionWorkflowId(account: string, session: string): string {
  return `session:${account}:${session}`;
}
